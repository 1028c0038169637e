"""MCP both ways (needs the `mcp` extra): `mcp:CMD_OR_URL` imports a tool server as the tool
set of a task environment (`env`), and `envgym serve-env ID --mcp` serves an environment's
tools over MCP (`server`)."""

"""An example MCP tool server (stdio) written with the `mcp` package's own API: arithmetic
and a scratch folder. Files live in the server's working directory, which envgym empties at
every reset. `python examples/mcp/notes_server.py` speaks MCP on stdin/stdout;
`python examples/mcp/notes_server.py --http PORT` serves streamable HTTP on
http://127.0.0.1:PORT/mcp instead (envgym then imports it as `mcp:http://127.0.0.1:PORT/mcp`,
and files land in the directory the server was started in)."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("envgym-example-notes")


def _inside(path: str) -> Path:
    """`path` under the working directory; a path that escapes it is refused."""
    root = Path.cwd().resolve()
    target = (root / path).resolve()
    if root not in (target, *target.parents):
        raise ValueError(f"{path!r} is outside the working directory")
    return target


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@server.tool()
def write_file(path: str, content: str) -> str:
    """Write a note to a file in the working directory."""
    target = _inside(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    return f"wrote {len(content)} characters to {path}"


@server.tool()
def read_file(path: str) -> str:
    """Read a note from the working directory."""
    return _inside(path).read_text()


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")

"""`envgym serve-env ID --mcp`: an environment's tools over MCP (stdio; the `mcp` package's
own low-level `Server`).

An MCP client spawns this process and is its one session, so each client gets its own
environment instance. `tools/list` gives the environment's tools plus two of the session's:

* `env_reset(seed)` starts an episode and returns the opening messages;
* `env_respond(text)` sends a plain assistant turn (a final answer, or any action text).

`tools/call` of an environment tool writes the call in the environment's own syntax
(`<tool_call>{...}</tool_call>` or `<name>arg</name>`) and steps the environment with it.
Every step returns the new messages as text, and reward, reward components, `terminated`,
`truncated` and the outcome as structured content, so a client sees the environment's
rewards, not only its tools. A call before `env_reset` resets with seed 0.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["EnvSession", "RESET", "RESPOND", "build_server", "serve_stdio"]

RESET, RESPOND = "env_reset", "env_respond"


class EnvSession:
    """One client's environment and the translation of MCP calls into its actions."""

    def __init__(self, env_id: str, kwargs: dict[str, Any]):
        from envgym.registration import make

        self.env = make(env_id, **kwargs)
        self.started = False

    def tools(self) -> list[dict[str, Any]]:
        """`{name, description, inputSchema}` for every tool, the session's two first."""
        own = [
            {"name": RESET, "description": "Start a new episode; returns the opening messages.",
             "inputSchema": {"type": "object", "properties": {"seed": {"type": "integer"}}}},
            {"name": RESPOND, "description": "Send a plain assistant turn (e.g. the final "
             "answer) to the environment.", "inputSchema": {
                 "type": "object", "properties": {"text": {"type": "string"}},
                 "required": ["text"]}},
        ]
        for schema in self.env.tool_schemas():
            fn = schema.get("function", schema)
            own.append({"name": fn["name"], "description": fn.get("description", ""),
                        "inputSchema": fn.get("parameters") or {"type": "object"}})
        return own

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """`(text, structured)` of one tool call."""
        if name == RESET:
            obs, info = self.env.reset(seed=int(arguments.get("seed", 0)))
            self.started = True
            return _render(obs), {"task_id": info.get("task_id"), "done": False}
        if not self.started:
            self.call(RESET, {"seed": 0})
        if name == RESPOND:
            action = str(arguments.get("text", ""))
        elif name in {t["name"] for t in self.tools()}:
            action = self._action(name, arguments)
        else:
            raise ValueError(f"unknown tool {name!r}")
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.started = not (terminated or truncated)
        structured = {"reward": reward, "reward_components": info.get("reward_components", {}),
                      "terminated": terminated, "truncated": truncated, "done": not self.started,
                      "outcome": info.get("outcome")}
        return _render(obs), json.loads(json.dumps(structured, default=str))

    def _action(self, name: str, arguments: dict[str, Any]) -> str:
        """The call in the environment's own syntax."""
        if getattr(self.env, "tool_format", "json") == "tag":
            tool = next((t for t in getattr(self.env, "tools", ()) if t.name == name), None)
            field = tool.single_field if tool is not None else None
            if field is not None:
                return f"<{name}>{arguments.get(field, '')}</{name}>"
        return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"

    def close(self) -> None:
        self.env.close()


def _render(messages: list[dict[str, Any]]) -> str:
    return "\n\n".join(f"[{m.get('role')}] {m.get('content')}" for m in messages) or "(no message)"


def build_server(session: EnvSession) -> Any:
    """A low-level MCP `Server` whose handlers drive `session`."""
    import mcp_types as types
    from mcp.server import Server

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool(name=t["name"], description=t["description"],
                                                       input_schema=t["inputSchema"])
                                            for t in session.tools()])

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        try:
            text, structured = session.call(params.name, dict(params.arguments or {}))
        except Exception as e:  # noqa: BLE001 - a tool error is a result the client reads
            why = types.TextContent(type="text", text=f"{type(e).__name__}: {e}")
            return types.CallToolResult(content=[why], is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=structured, is_error=False)

    return Server("envgym", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def serve_stdio(env_id: str, kwargs: dict[str, Any]) -> None:
    """Serve one session on stdin/stdout until the client leaves."""
    from envgym.integrations.mcp.connection import require_mcp

    require_mcp()
    import anyio
    from mcp.server.stdio import stdio_server

    session = EnvSession(env_id, kwargs)
    server = build_server(session)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        session.close()

"""A synchronous handle on one MCP client session (the `mcp` package's `ClientSession`).

`TextEnv.step` is synchronous, while the MCP client is async and its transports (stdio
subprocess, streamable HTTP) are anyio context managers that must be entered and left in one
task. So each `McpConnection` owns a private event loop in a thread and one long-lived task
that opens the transport and the session, then serves requests from a queue until `close()`.
Every request is bounded by `timeout`; a hang, a dead server or a protocol error raises
`ImportedEnvError`, which fails the episode loudly.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

from envgym.integrations.imported import ImportedEnvError

from envgym.errors import InvalidConfig

__all__ = ["McpConnection", "require_mcp", "tool_schema"]


def require_mcp() -> None:
    """The `mcp` extra, or an error that says how to get it."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise InvalidConfig("MCP needs the `mcp` package: pip install 'envgym[mcp]'") from None


def tool_schema(tool: Any) -> dict[str, Any]:
    """An MCP `Tool` as the OpenAI-style schema envgym renders in prompts."""
    return {"type": "function", "function": {
        "name": tool.name, "description": tool.description or "",
        "parameters": dict(tool.input_schema or {"type": "object", "properties": {}})}}


class McpConnection:
    """One session on an MCP server: `target` is an `http(s)://` URL (streamable HTTP) or a
    command line started as a stdio server in `cwd`."""

    def __init__(self, target: str, *, cwd: str | Path | None = None, timeout: float = 30.0,
                 env: dict[str, str] | None = None):
        self.target, self.timeout = target, float(timeout)
        self.cwd, self.env = cwd, env
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="envgym-mcp")
        self._thread.start()
        self._queue: asyncio.Queue | None = None
        self._runner: Any = None
        self._ready = self._submit(self._open())
        try:
            self._tools = self._ready.result(timeout=self.timeout + 30)
        except Exception as e:
            self.close()
            raise ImportedEnvError(f"MCP server {target!r} did not start: {_why(e)}") from e

    @property
    def tools(self) -> list[Any]:
        return list(self._tools)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """`(text, is_error)` of one `tools/call`."""
        result = self._request(lambda s: s.call_tool(name, arguments), f"tools/call {name}")
        parts = [getattr(c, "text", None) or f"[{getattr(c, 'type', 'content')}]"
                 for c in result.content or []]
        if not parts and result.structured_content is not None:
            parts = [str(result.structured_content)]
        return "\n".join(parts), bool(result.is_error)

    def close(self) -> None:
        """Leave the session and the transport (stops a stdio server), then the loop."""
        if self._queue is not None and self._runner is not None and not self._runner.done():
            fut = asyncio.run_coroutine_threadsafe(self._queue.put(None), self._loop)
            try:
                fut.result(timeout=5)
                asyncio.run_coroutine_threadsafe(asyncio.wait_for(
                    asyncio.shield(self._runner), 10), self._loop).result(timeout=12)
            except Exception:  # noqa: BLE001 - closing a broken session must not raise
                self._runner.cancel()
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    # ---- the loop thread ---------------------------------------------------------------------

    def _submit(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _request(self, make: Any, what: str) -> Any:
        if self._runner is None or self._runner.done():
            raise ImportedEnvError(f"MCP server {self.target!r} is gone ({what})")
        reply: asyncio.Future = asyncio.run_coroutine_threadsafe(self._enqueue(make), self._loop
                                                                 ).result(timeout=5)
        try:
            return asyncio.run_coroutine_threadsafe(
                asyncio.wait_for(asyncio.shield(reply), self.timeout), self._loop
            ).result(timeout=self.timeout + 5)
        except (TimeoutError, asyncio.TimeoutError):
            raise ImportedEnvError(f"MCP {what} on {self.target!r} did not answer within "
                                   f"{self.timeout:g}s (timeout)") from None
        except ImportedEnvError:
            raise
        except Exception as e:
            raise ImportedEnvError(f"MCP {what} on {self.target!r} failed: {_why(e)}") from e

    async def _enqueue(self, make: Any) -> asyncio.Future:
        reply = self._loop.create_future()
        await self._queue.put((make, reply))
        return reply

    async def _open(self) -> list[Any]:
        self._queue = asyncio.Queue()
        started = self._loop.create_future()
        self._runner = self._loop.create_task(self._serve(started))
        return await started

    async def _serve(self, started: asyncio.Future) -> None:
        from mcp import ClientSession

        try:
            async with self._transport() as streams, ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                listed = await s.list_tools()
                started.set_result(list(listed.tools))
                while (item := await self._queue.get()) is not None:
                    make, reply = item
                    try:
                        reply.set_result(await make(s))
                    except Exception as e:  # noqa: BLE001 - handed to the caller
                        if not reply.done():
                            reply.set_exception(e)
        except BaseException as e:  # noqa: BLE001 - the server died or broke the protocol
            if not started.done():
                started.set_exception(e if isinstance(e, Exception) else RuntimeError(repr(e)))
            self._fail_pending(e)

    def _fail_pending(self, e: BaseException) -> None:
        while self._queue is not None and not self._queue.empty():
            item = self._queue.get_nowait()
            if item is not None and not item[1].done():
                item[1].set_exception(ImportedEnvError(f"MCP server died: {_why(e)}"))

    def _transport(self) -> Any:
        if self.target.startswith(("http://", "https://")):
            from mcp.client.streamable_http import streamable_http_client

            return _first_two(streamable_http_client(self.target))
        from mcp import StdioServerParameters, stdio_client

        argv = shlex.split(self.target)
        if not argv:
            raise ImportedEnvError("mcp: an empty command")
        # the server runs in its own working directory: paths the caller named are made
        # absolute first, so `mcp:python examples/server.py` means what it says
        argv = [str(Path(a).absolute()) if os.sep in a and Path(a).exists() else a for a in argv]
        command = sys.executable if argv[0] in ("python", "python3") else argv[0]
        params = StdioServerParameters(command=command, args=argv[1:],
                                       cwd=str(self.cwd) if self.cwd else None,
                                       env={**os.environ, **(self.env or {})})
        return stdio_client(params, errlog=sys.stderr)


class _first_two:
    """Adapts a transport whose context yields more than (read, write) streams."""

    def __init__(self, inner: Any):
        self.inner = inner

    async def __aenter__(self) -> tuple[Any, Any]:
        got = await self.inner.__aenter__()
        return got[0], got[1]

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)


def _why(e: BaseException) -> str:
    inner = getattr(e, "exceptions", None)
    if inner:  # anyio's ExceptionGroup: the first real cause
        return _why(inner[0])
    return f"{type(e).__name__}: {e}"

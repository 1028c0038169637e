"""An ASGI guard in front of openenv-core's `/ws` handler and its validation errors.

openenv-core 0.3.0's handler (which we keep: its protocol, its sessions) has three faults
this layer absorbs without forking it:

* a binary frame makes `receive_text()` raise `KeyError('text')`, which ends the session
  with the message `'text'`; a JSON frame that is not an object (`[1, 2]`, `"hi"`) ends it
  with an AttributeError. Here both are answered with a clear `INVALID_FRAME` error and the
  session goes on;
* its final `websocket.close()` catches only `RuntimeError`, but after the client has gone
  uvicorn raises `ClientDisconnected` (an `OSError`), so every normal session end logged an
  "Exception in ASGI application" traceback. Here sends after the client left are dropped;
* validation errors echo the offending value whole (`errors[].input`: a 4 MB action comes
  back as 4 MB). Here strings in error frames and 422 bodies are cut to `MAX_ECHO` chars;
* its handler answers `INVALID_JSON` only for `json.JSONDecodeError`: JSON nested deeper than
  the parser's recursion limit raises `RecursionError`, which ended the session with
  `SESSION_ERROR`. Here such a frame is answered with `INVALID_JSON` and the session goes on.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_ECHO", "WebSocketGuard", "truncate"]

MAX_ECHO = 256


def truncate(value: Any, limit: int = MAX_ECHO) -> Any:
    """`value` with every string over `limit` chars cut, saying how long it was."""
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]}… [{len(value)} chars]"
    if isinstance(value, dict):
        return {k: truncate(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [truncate(v, limit) for v in value]
    return value


_NESTING_SAFE = 256
"""Frames with fewer opening brackets than this cannot reach the parser's recursion limit,
so only the others are parsed here to find out (openenv parses every frame again)."""


def _frame_problem(message: dict[str, Any]) -> tuple[str, str] | None:
    """(why openenv's handler cannot take this frame, error code), or None to pass it on."""
    text = message.get("text")
    if text is None:
        return ("binary frames are not accepted: send each message as a JSON text frame, "
                'e.g. {"type": "reset", "data": {}}', "INVALID_FRAME")
    is_object = text.lstrip()[:1] == "{"
    if is_object and text.count("[") + text.count("{") < _NESTING_SAFE:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None  # openenv answers INVALID_JSON itself
    except RecursionError:
        return ("the message is nested too deeply to parse: send a flat JSON object such as "
                '{"type": "step", "data": {...}}', "INVALID_JSON")
    if is_object:
        return None
    return (f"a message must be a JSON object with a \"type\" (reset, step, state, close, "
            f"mcp), got a JSON {type(value).__name__}", "INVALID_FRAME")


def _cut_error(text: str) -> str:
    if not text.startswith('{"type":"error"') or len(text) <= MAX_ECHO * 4:
        return text
    try:
        return json.dumps(truncate(json.loads(text)), ensure_ascii=False)
    except (json.JSONDecodeError, RecursionError):
        return text


class WebSocketGuard:
    def __init__(self, app: Any, path: str = "/ws"):
        self.app, self.path = app, path

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        gone = False

        async def guarded_send(message: dict[str, Any]) -> None:
            nonlocal gone
            if gone:
                return
            if message["type"] == "websocket.send" and message.get("text"):
                message = {**message, "text": _cut_error(message["text"])}
            try:
                await send(message)
            except OSError:  # uvicorn's ClientDisconnected: nobody is listening any more
                gone = True

        async def guarded_receive() -> dict[str, Any]:
            nonlocal gone
            while True:
                message = await receive()
                if message["type"] == "websocket.disconnect":
                    gone = True
                if message["type"] != "websocket.receive":
                    return message
                problem = _frame_problem(message)
                if problem is None:
                    return message
                await guarded_send({"type": "websocket.send", "text": json.dumps(
                    {"type": "error", "data": {"message": problem[0], "code": problem[1]}})})

        await self.app(scope, guarded_receive, guarded_send)

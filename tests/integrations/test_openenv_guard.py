"""`serve-env`'s WebSocket guard, against a stand-in for openenv-core's handler (issue 35.7).

The stand-in behaves as openenv-core 0.3.0's `/ws` loop does: it answers `INVALID_JSON` for a
`json.JSONDecodeError` only, and any other exception while parsing ends the session with
`SESSION_ERROR`. The guard must keep a frame nested 50,000 deep from ending the session.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from envgym.integrations.openenv.guard import WebSocketGuard

DEEP_IN_OBJECT = '{"type": "step", "data": {"content": %s"x"%s}}' % ("[" * 50_000, "]" * 50_000)
DEEP_ARRAY = "[" * 50_000 + "]" * 50_000


async def _openenv_like(scope, receive, send):
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        try:
            data = json.loads(message["text"])
        except json.JSONDecodeError:
            await send({"type": "websocket.send", "text": json.dumps(
                {"type": "error", "data": {"message": "bad json", "code": "INVALID_JSON"}})})
            continue
        except Exception as e:  # noqa: BLE001 - as openenv: the session ends
            await send({"type": "websocket.send", "text": json.dumps(
                {"type": "error", "data": {"message": str(e), "code": "SESSION_ERROR"}})})
            await send({"type": "websocket.close"})
            return
        await send({"type": "websocket.send", "text": json.dumps(
            {"type": "ok", "data": {"echo": data.get("type")}})})


def _session(frames: list[str]) -> list[dict]:
    """Send `frames` through the guard; return every frame the client got."""
    inbox = [{"type": "websocket.connect"}]
    inbox += [{"type": "websocket.receive", "text": f} for f in frames]
    inbox.append({"type": "websocket.disconnect", "code": 1000})
    out: list[dict] = []

    async def receive():
        return inbox.pop(0)

    async def send(message):
        out.append(message)

    guard = WebSocketGuard(_openenv_like)
    asyncio.run(guard({"type": "websocket", "path": "/ws"}, receive, send))
    return [json.loads(m["text"]) for m in out if m["type"] == "websocket.send"]


@pytest.mark.parametrize("frame", [DEEP_IN_OBJECT, DEEP_ARRAY], ids=["in-object", "array"])
def test_deeply_nested_json_is_invalid_json_and_the_session_lives(frame):
    got = _session([frame, json.dumps({"type": "state"})])
    assert got[0]["type"] == "error" and got[0]["data"]["code"] == "INVALID_JSON"
    assert "nested too deeply" in got[0]["data"]["message"]
    assert got[1] == {"type": "ok", "data": {"echo": "state"}}  # not SESSION_ERROR, not closed


def test_ordinary_frames_pass_through_untouched():
    many_brackets = json.dumps({"type": "step", "data": {"content": "[" * 1000}})
    got = _session([json.dumps({"type": "reset"}), many_brackets, "{not json", "[1, 2]"])
    assert [g["type"] for g in got] == ["ok", "ok", "error", "error"]
    assert got[2]["data"]["code"] == "INVALID_JSON" and got[3]["data"]["code"] == "INVALID_FRAME"

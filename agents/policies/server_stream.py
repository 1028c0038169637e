"""Server-sent events for `serve-policy` (`stream: true`), in OpenAI's chunk format.

Each scheduler round publishes the rows it advanced; every row becomes a choice whose text
delta is what can no longer change: text that might be the start of a stop string, or an
incomplete UTF-8 character, is held back until the next round or the end. Chunks also
carry envgym's `token_ids` (the new ids), so a streaming client stays token-exact.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from envgym.agents.policies.server_engine import Row, ShuttingDown
from envgym.agents.policies.server_params import APIError, Request

__all__ = ["sse_events"]


def _event(data: Any) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


class _Progress:
    """What one choice has already sent."""

    def __init__(self) -> None:
        self.text = 0
        self.tokens = 0
        self.finished = False


async def sse_events(api: Any, rows: list[Row], req: Request, queue: asyncio.Queue,
                     chat: bool) -> AsyncIterator[str]:
    head = {"id": f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion.chunk" if chat else "text_completion",
            "created": int(time.time()), "model": api.name}
    index = {id(r): i for i, r in enumerate(rows)}
    progress = [_Progress() for _ in rows]
    if chat:
        for i in range(len(rows)):
            yield _event({**head, "choices": [{"index": i, "delta": {"role": "assistant",
                                                                     "content": ""},
                                               "logprobs": None, "finish_reason": None}]})
    while not all(p.finished for p in progress):
        row = await queue.get()
        i = index[id(row)]
        if progress[i].finished:
            continue
        if row.error is not None:
            yield _event(_error(row.error))
            return
        choice = _delta(api, row, req, progress[i], i, chat)
        if choice is not None:
            yield _event({**head, "choices": [choice]})
    if req.include_usage:
        prompt_tokens = sum(len(r.prompt) for r in rows[::req.n])
        completion = sum(len(r.ids) for r in rows)
        yield _event({**head, "choices": [], "usage": {
            "prompt_tokens": prompt_tokens, "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion}})
    yield "data: [DONE]\n\n"


def _error(error: BaseException) -> dict[str, Any]:
    if isinstance(error, APIError):
        return error.body()
    kind = "server_error"
    message = (str(error) if isinstance(error, ShuttingDown)
               else f"internal error: {type(error).__name__}: {error}")
    return APIError(message, status=500, kind=kind).body()


def _delta(api: Any, row: Row, req: Request, sent: _Progress, i: int, chat: bool
           ) -> dict[str, Any] | None:
    done = row.finish is not None
    if done:
        text, _ = api._texts(row, req)
    else:
        text = api.chat_tok.decode(row.ids)
        hold = max(map(len, req.sampling.stop), default=1) - 1
        text = text[:max(sent.text, len(text) - hold)].rstrip("\ufffd")
    delta = text[sent.text:] if len(text) > sent.text else ""
    new_ids = row.ids[sent.tokens:]
    new_lps = row.logprobs[sent.tokens:]
    if not delta and not new_ids and not done:
        return None
    sent.text = max(sent.text, len(text))
    sent.tokens = len(row.ids)
    sent.finished = done
    finish = row.finish if done else None
    if chat:
        logprobs = ({"content": api._content_logprobs(new_ids, new_lps)}
                    if req.want_logprobs else None)
        choice = {"index": i, "delta": {"content": delta}, "logprobs": logprobs,
                  "finish_reason": finish}
    else:
        choice = {"index": i, "text": delta, "finish_reason": finish,
                  "logprobs": {"tokens": [api.chat_tok.decode([t]) for t in new_ids],
                               "token_logprobs": new_lps, "top_logprobs": None}}
    choice["token_ids"] = new_ids
    if done:
        choice["stop_reason"] = row.stop_hit
    return choice

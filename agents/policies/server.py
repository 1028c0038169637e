"""`envgym serve-policy SPEC`: a small OpenAI-compatible server over a local policy.

Serves `/v1/completions` (string or token-id prompts; `echo` for prompt log-probs),
`/v1/chat/completions`, `/v1/models` and `/health`. Every choice carries `token_ids` and
`logprobs.token_logprobs`, so clients stay token-exact. Concurrent requests with the same
sampling parameters are merged into one batched `generate` call (micro-batching), which is
what makes many small client requests cheap.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from envgym.policy import SamplingParams

__all__ = ["create_app", "serve"]


class _MicroBatcher:
    """Merges concurrent requests with equal sampling params into one generate call."""

    def __init__(self, policy: Any, wait: float = 0.01):
        self.policy, self.wait = policy, wait
        self.pending: dict[SamplingParams, list[tuple[list, asyncio.Future]]] = {}
        self.lock = asyncio.Lock()

    async def generate(self, prompts: list, sampling: SamplingParams) -> list:
        future = asyncio.get_running_loop().create_future()
        first = sampling not in self.pending
        self.pending.setdefault(sampling, []).append((prompts, future))
        if first:
            asyncio.ensure_future(self._flush(sampling))
        return await future

    async def _flush(self, sampling: SamplingParams) -> None:
        await asyncio.sleep(self.wait)
        async with self.lock:
            batch = self.pending.pop(sampling, [])
            flat = [p for prompts, _ in batch for p in prompts]
            try:
                out = await asyncio.to_thread(self.policy.generate, flat, sampling)
            except Exception as e:  # noqa: BLE001 - reported to each waiting request
                for _, future in batch:
                    future.set_exception(e)
                return
            for prompts, future in batch:
                future.set_result(out[:len(prompts)])
                out = out[len(prompts):]


def create_app(policy: Any, model_name: str | None = None) -> Any:
    """The FastAPI app serving `policy` (a token policy such as `HFPolicy`)."""
    from fastapi import FastAPI, HTTPException

    app = FastAPI(title="envgym policy server")
    name = model_name or getattr(policy, "name", "policy").partition(":")[2] or "policy"
    batcher = _MicroBatcher(policy)
    chat = policy.chat

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "envgym"}]}

    @app.post("/v1/completions")
    async def completions(body: dict[str, Any]) -> dict[str, Any]:
        prompts = _prompts(body.get("prompt"), chat)
        sampling = _sampling(body)
        if body.get("echo"):
            return _echo(policy, prompts, body, name)
        outs = await batcher.generate(prompts, sampling)
        return _response(name, "text_completion", [
            {"index": i, "text": c.text, "finish_reason": c.finish_reason, "token_ids": c.token_ids,
             "logprobs": {"tokens": [chat.decode([t]) for t in c.token_ids],
                          "token_logprobs": c.logprobs}}
            for i, c in enumerate(outs)], prompts, outs)

    @app.post("/v1/chat/completions")
    async def chat_completions(body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise HTTPException(400, "messages must be a non-empty list")
        prompt = chat.prompt_ids(messages)
        outs = await batcher.generate([prompt], _sampling(body))
        return _response(name, "chat.completion", [
            {"index": 0, "finish_reason": c.finish_reason, "token_ids": c.token_ids,
             "message": {"role": "assistant", "content": c.text},
             "logprobs": {"content": [{"token": chat.decode([t]), "logprob": lp}
                                      for t, lp in zip(c.token_ids, c.logprobs)]}}
            for c in outs], [prompt], outs)

    return app


def _prompts(prompt: Any, chat: Any) -> list[list[int]]:
    from fastapi import HTTPException
    if isinstance(prompt, str):
        return [chat.encode(prompt)]
    if isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt):
        return [prompt]
    if isinstance(prompt, list) and prompt:
        return [chat.encode(p) if isinstance(p, str) else list(p) for p in prompt]
    raise HTTPException(400, "prompt must be a string, token ids, or a list of either")


def _sampling(body: dict[str, Any]) -> SamplingParams:
    stop = body.get("stop") or ()
    return SamplingParams(max_tokens=int(body.get("max_tokens") or 16),
                          temperature=float(body.get("temperature", 1.0)),
                          top_p=float(body.get("top_p", 1.0)), top_k=max(0, int(body.get("top_k", 0))),
                          stop=(stop,) if isinstance(stop, str) else tuple(stop),
                          seed=body.get("seed"))


def _echo(policy: Any, prompts: list[list[int]], body: dict[str, Any], name: str) -> dict[str, Any]:
    """Prompt log-probs (`echo` with `max_tokens` 0 or 1): how clients score targets."""
    scores = policy.score_ids([(p[:1], p[1:]) for p in prompts])
    choices = [{"index": i, "text": policy.chat.decode(p), "finish_reason": "length",
                "token_ids": [], "prompt_token_ids": p,
                "logprobs": {"tokens": [policy.chat.decode([t]) for t in p],
                             "token_logprobs": [None, *s]}}
               for i, (p, s) in enumerate(zip(prompts, scores))]
    return _response(name, "text_completion", choices, prompts, [])


def _response(name, kind, choices, prompts, outs) -> dict[str, Any]:
    completion_tokens = sum(len(c.token_ids) for c in outs)
    prompt_tokens = sum(len(p) for p in prompts)
    return {"id": f"cmpl-{uuid.uuid4().hex[:12]}", "object": kind, "created": int(time.time()),
            "model": name, "choices": choices,
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def serve(spec: str, host: str = "127.0.0.1", port: int = 8001, **options: Any) -> None:
    """Load `spec` and serve it until interrupted."""
    import uvicorn

    from envgym.policy import load_policy
    policy = load_policy(spec, **options)
    uvicorn.run(create_app(policy), host=host, port=port, log_level="warning")

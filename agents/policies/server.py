"""`envgym serve-policy SPEC`: an OpenAI-compatible server over a local policy.

Serves `/v1/completions` (string or token-id prompts; `echo` for prompt log-probs),
`/v1/chat/completions` (string or text-part contents), `/v1/models` and `/health`, with
SSE streaming (`stream`), `n`, `logprobs` / `top_logprobs`, stop strings and seeds. As in
OpenAI's API the matched stop string is cut from `text` (`include_stop_str_in_output`, as in
vLLM, keeps it); every choice also carries envgym's exact record: `token_ids` (all sampled
ids, the stop's tokens and EOS included), `stop_reason` (the stop string, as vLLM names it)
and `envgym` (`text` uncut, `finish`: "eos" | "stop_string" | "length", and the weights'
`policy_version` / `policy_versions` that sampled it). With `--allow-weight-sync`,
`/v1/load_weights` replaces the served weights between rounds (`server_weights`); `/health`
reports the served `version`.

Work is bounded: prompts and completions are capped (`Limits`, a 400 beyond them), and the
scheduler (`server_engine.Engine`) decodes every request in short chunks, shared across
requests with different sampling settings, so a long request cannot hold up short ones and a
disconnected client's rows stop at the next chunk. Bad input of any kind is a 400 naming the
field; an unexpected failure is a JSON 500; neither drops a keep-alive connection.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from starlette.requests import Request as HTTPRequest

from envgym.agents.policies.server_engine import Engine, Row, ShuttingDown
from envgym.agents.policies.server_params import (APIError, Limits, Request, check_chars,
                                                  check_length, check_model, parse_common,
                                                  parse_messages, parse_prompt)

__all__ = ["create_app", "default_limits", "serve"]

_DISCONNECT_POLL_S = 0.2  # 32 waiting handlers polling faster cost real CPU


def default_limits(policy: Any, max_tokens: int | None = None,
                   max_prompt_tokens: int | None = None,
                   max_prompt_chars: int | None = None) -> Limits:
    """Caps from the model's context length (when the backend exposes one)."""
    config = getattr(getattr(policy, "model", None), "config", None)
    context = getattr(config, "max_position_embeddings", None)
    vocab = getattr(config, "vocab_size", None)
    if vocab is None and getattr(policy, "tokenizer", None) is not None:
        vocab = len(policy.tokenizer)
    fallback = context or 4096
    return Limits(max_tokens=max_tokens or fallback,
                  max_prompt_tokens=max_prompt_tokens or max(1, fallback - 1),
                  context=context, vocab=vocab, max_prompt_chars=max_prompt_chars)


def create_app(policy: Any, model_name: str | None = None, *, limits: Limits | None = None,
               chunk_tokens: int = 16, max_batch: int = 64,
               allow_weight_sync: bool = False) -> Any:
    """The FastAPI app serving `policy` (a token policy such as `HFPolicy`); with
    `allow_weight_sync`, also `POST /v1/load_weights` (`server_weights`)."""
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    name = model_name or getattr(policy, "name", "policy").partition(":")[2] or "policy"
    names = {name, getattr(policy, "name", name)}
    limits = limits or default_limits(policy)
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        engine = Engine(policy, chunk_tokens=chunk_tokens, max_batch=max_batch)
        state["engine"] = engine
        app.state.engine = engine
        task = asyncio.create_task(engine.run())
        yield
        engine.abort()
        task.cancel()

    app = FastAPI(title="envgym policy server", lifespan=lifespan)
    api = _API(policy, name, names, limits, state)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        engine = state.get("engine")
        return {"status": "stopping" if engine and engine.stopping else "ok", "model": name,
                "live_rows": engine.live if engine else 0,
                "rounds": engine.rounds if engine else 0,
                "version": engine.version if engine else 0}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{
            "id": name, "object": "model", "created": 0, "owned_by": "envgym",
            "max_model_len": limits.context}]}

    async def guarded(request: HTTPRequest, handler: Any) -> Any:
        try:
            body = await _json_body(request)
            return await handler(body, request)
        except APIError as e:
            return JSONResponse(e.body(), status_code=e.status)
        except ShuttingDown as e:
            return JSONResponse(APIError(str(e), status=503, kind="server_error").body(), 503)
        except _ClientGone:
            from fastapi.responses import Response
            return Response(status_code=499)  # nobody reads it; no traceback in the log
        except Exception as e:  # noqa: BLE001 - a JSON 500 keeps the connection usable
            return JSONResponse(APIError(f"internal error: {type(e).__name__}: {e}",
                                         status=500, kind="server_error").body(), 500)

    @app.post("/v1/completions")
    async def completions(request: HTTPRequest) -> Any:
        return await guarded(request, api.completions)

    @app.post("/v1/chat/completions")
    async def chat_completions(request: HTTPRequest) -> Any:
        return await guarded(request, api.chat)

    if allow_weight_sync:
        @app.post("/v1/load_weights")
        async def load_weights(request: HTTPRequest) -> Any:
            return await guarded(request, api.load_weights)

    app.state.stop = lambda deadline: _stop_at(state, deadline)
    return app


class _ClientGone(Exception):
    """The client disconnected while its rows were queued or decoding."""


def _stop_at(state: dict[str, Any], deadline: float) -> None:
    """SIGTERM: refuse new work now; fail what is still queued shortly before `deadline`."""
    engine = state.get("engine")
    if engine is None:
        return
    engine.stopping = True
    loop = asyncio.get_event_loop()
    left = deadline - time.monotonic()
    delay = max(0.0, left - min(1.0, left / 4))  # time to answer before uvicorn cancels
    loop.call_soon_threadsafe(lambda: loop.call_later(delay, engine.abort))


async def _json_body(request: Any) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise APIError(f"the body is not valid JSON: {e}") from None
    except RecursionError:  # arrays or objects nested thousands deep: bad input, not a 500
        raise APIError("the body is nested too deeply to parse") from None
    if not isinstance(body, dict):
        raise APIError("the body must be a JSON object")
    return body


class _API:
    """The two generation endpoints; `state["engine"]` is set by the app's lifespan."""

    def __init__(self, policy: Any, name: str, names: set[str], limits: Limits,
                 state: dict[str, Any]):
        self.policy, self.chat_tok = policy, policy.chat
        self.name, self.names, self.limits, self.state = name, names, limits, state

    @property
    def engine(self) -> Engine:
        engine = self.state.get("engine")
        if engine is None:
            raise ShuttingDown("the server is not running")
        return engine

    # ---- /v1/completions -------------------------------------------------------------------

    async def completions(self, body: dict[str, Any], request: Any) -> Any:
        check_model(body, self.names)
        req = parse_common(body, self.limits, chat=False)
        items = parse_prompt(body.get("prompt"), self.limits)
        prompts = await asyncio.to_thread(self._encode_all, items)
        samplings = [check_length(len(p), req, self.limits,
                                  "prompt" if len(prompts) == 1 else f"prompt[{i}]")
                     for i, p in enumerate(prompts)]
        if req.echo:
            return await self._echo(prompts, req, samplings)
        rows = _rows(prompts, samplings, req.n)
        if req.stream:
            return self._stream(rows, req, request, chat=False)
        await self._wait(rows, request)
        choices = [self._completion_choice(i, r, req) for i, r in enumerate(rows)]
        await self._add_top_logprobs(rows, req, choices, chat=False)
        return _response(self.name, "text_completion", choices, prompts, rows)

    def _encode_all(self, items: list[str | list[int]]) -> list[list[int]]:
        out = []
        for i, item in enumerate(items):
            if isinstance(item, str):
                ids = self.chat_tok.encode(item)
                if not ids:
                    raise APIError("the prompt encodes to no tokens", f"prompt[{i}]")
                out.append(ids)
            else:
                out.append(list(item))
        return out

    def _completion_choice(self, index: int, row: Row, req: Request) -> dict[str, Any]:
        text, raw = self._texts(row, req)
        return {"index": index, "text": text, "finish_reason": row.finish,
                "stop_reason": row.stop_hit, "token_ids": row.ids,
                "logprobs": {"tokens": [self.chat_tok.decode([t]) for t in row.ids],
                             "token_logprobs": row.logprobs, "top_logprobs": None,
                             "text_offset": _offsets(self.chat_tok, row.ids)},
                "envgym": _extension(row, raw)}

    async def _echo(self, prompts: list[list[int]], req: Request, samplings: list) -> Any:
        """`echo`: the prompt's own log-probs (how clients score), then any completion."""
        pairs = [(p[:1], p[1:]) for p in prompts]
        scores = await self.engine.call(lambda: self.policy.score_ids(pairs))
        rows = []
        if req.sampling.max_tokens > 0:
            rows = _rows(prompts, samplings, req.n)
            await self._wait(rows, None)
        choices = []
        for i, (p, s) in enumerate(zip(prompts, scores)):
            gen = rows[i * req.n:(i + 1) * req.n] or [None]
            for j, row in enumerate(gen):
                ids = row.ids if row else []
                text, _ = self._texts(row, req) if row else ("", "")
                choices.append({
                    "index": i * req.n + j, "text": self.chat_tok.decode(p) + text,
                    "finish_reason": row.finish if row else "length",
                    "token_ids": ids, "prompt_token_ids": p,
                    "logprobs": {"tokens": [self.chat_tok.decode([t]) for t in p + ids],
                                 "token_logprobs": [None, *s, *(row.logprobs if row else [])],
                                 "top_logprobs": None}})
        return _response(self.name, "text_completion", choices, prompts, rows)

    # ---- /v1/chat/completions --------------------------------------------------------------

    async def chat(self, body: dict[str, Any], request: Any) -> Any:
        check_model(body, self.names)
        messages = parse_messages(body.get("messages"))
        req = parse_common(body, self.limits, chat=True)
        add = body.get("add_generation_prompt", True)
        cont = body.get("continue_final_message", False)
        if not isinstance(add, bool) or not isinstance(cont, bool):
            raise APIError("add_generation_prompt and continue_final_message are booleans",
                           "add_generation_prompt" if not isinstance(add, bool)
                           else "continue_final_message")
        check_chars(sum(len(m["content"]) for m in messages), self.limits, "messages")
        prompt = await asyncio.to_thread(self._chat_prompt, messages, add, cont)
        sampling = check_length(len(prompt), req, self.limits, "messages")
        rows = _rows([prompt], [sampling], req.n)
        if req.stream:
            return self._stream(rows, req, request, chat=True)
        await self._wait(rows, request)
        choices = [self._chat_choice(i, r, req) for i, r in enumerate(rows)]
        await self._add_top_logprobs(rows, req, choices, chat=True)
        return _response(self.name, "chat.completion", choices, [prompt], rows)

    def _chat_prompt(self, messages: list[dict[str, str]], add: bool, cont: bool) -> list[int]:
        chat = self.chat_tok
        try:
            if cont and messages[-1]["role"] == "assistant":
                text = chat.render(messages[:-1], True) + messages[-1]["content"]
            else:
                text = chat.render(messages, add)
        except Exception as e:  # noqa: BLE001 - a template that cannot render these messages
            raise APIError(f"the chat template cannot render these messages: {e}",
                           "messages") from None
        ids = chat.encode(text)
        if not ids:
            raise APIError("the messages render to an empty prompt", "messages")
        return ids

    def _chat_choice(self, index: int, row: Row, req: Request) -> dict[str, Any]:
        text, raw = self._texts(row, req)
        logprobs = ({"content": self._content_logprobs(row.ids, row.logprobs)}
                    if req.want_logprobs else None)
        return {"index": index, "message": {"role": "assistant", "content": text},
                "finish_reason": row.finish, "stop_reason": row.stop_hit,
                "token_ids": row.ids, "logprobs": logprobs, "envgym": _extension(row, raw)}

    def _content_logprobs(self, ids: list[int], lps: list[float]) -> list[dict[str, Any]]:
        out = []
        for t, lp in zip(ids, lps):
            token = self.chat_tok.decode([t])
            out.append({"token": token, "logprob": lp, "bytes": list(token.encode()),
                        "top_logprobs": []})
        return out

    # ---- /v1/load_weights -------------------------------------------------------------------

    async def load_weights(self, body: dict[str, Any], request: Any) -> dict[str, Any]:
        """Check the weights off the engine's thread, then load them between two rounds."""
        from envgym.agents.policies.server_weights import is_loopback, parse_load, read_weights

        client = getattr(getattr(request, "client", None), "host", None) or ""
        if not is_loopback(client):
            raise APIError(f"load_weights is served to loopback clients only, not {client!r}",
                           status=403, kind="permission_error")
        model = getattr(self.policy, "model", None)
        if model is None or not hasattr(self.policy, "load_state_dict"):
            raise APIError("load_weights needs a local model backend (hf)")
        file, version = parse_load(body)
        state = await asyncio.to_thread(read_weights, file, model)
        await self.engine.load_weights(lambda: self.policy.load_state_dict(state), version)
        return {"version": version, "path": str(file), "tensors": len(state)}

    # ---- shared ----------------------------------------------------------------------------

    def _texts(self, row: Row, req: Request) -> tuple[str, str]:
        """(the text OpenAI returns: cut before the stop string; the text of all ids)."""
        raw = self.chat_tok.decode(row.ids[:-1] if row.eos else row.ids)
        whole = _whole_chars(raw)
        if row.stop_hit is None or req.include_stop:
            return whole, raw
        cut = min((i for i in (whole.find(s) for s in req.sampling.stop) if i >= 0),
                  default=len(whole))
        return whole[:cut], raw

    async def _wait(self, rows: list[Row], request: Any) -> None:
        """Wait for `rows`; a client that disconnects meanwhile cancels them."""
        self.engine.submit(rows)
        futures = [r.future for r in rows]
        try:
            while True:
                done, _ = await asyncio.wait(futures, timeout=_DISCONNECT_POLL_S)
                if len(done) == len(futures):
                    break
                if request is not None and await request.is_disconnected():
                    raise _ClientGone
        except BaseException:
            for r in rows:
                r.cancel()
            raise
        for f in futures:
            f.result()  # re-raises a row's error

    async def _add_top_logprobs(self, rows: list[Row], req: Request,
                                choices: list[dict[str, Any]], chat: bool) -> None:
        if not req.top_logprobs:
            return
        if getattr(self.policy, "model", None) is None:
            raise APIError("top_logprobs needs a local model backend (hf)",
                           "top_logprobs" if chat else "logprobs")
        from envgym.agents.policies.server_logprobs import top_logprobs
        k = req.top_logprobs
        tops = await self.engine.call(lambda: [top_logprobs(self.policy, r.prompt, r.ids, k,
                                                            r.params.temperature)
                                               for r in rows])
        for choice, top in zip(choices, tops):
            if chat:
                for entry, alts in zip(choice["logprobs"]["content"], top):
                    entry["top_logprobs"] = [{"token": tok, "logprob": lp,
                                              "bytes": list(tok.encode())} for tok, lp in alts]
            else:
                choice["logprobs"]["top_logprobs"] = [dict(alts) for alts in top]

    def _stream(self, rows: list[Row], req: Request, request: Any, chat: bool) -> Any:
        from fastapi.responses import StreamingResponse

        from envgym.agents.policies.server_stream import sse_events
        queue: asyncio.Queue = asyncio.Queue()
        for r in rows:
            r.listener = queue
        self.engine.submit(rows)
        events = sse_events(self, rows, req, queue, chat=chat)
        return StreamingResponse(_cancel_on_exit(events, rows), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})


async def _cancel_on_exit(events: AsyncIterator[str], rows: list[Row]) -> AsyncIterator[str]:
    try:
        async for event in events:
            yield event
    finally:
        for r in rows:
            r.cancel()


def _rows(prompts: list[list[int]], samplings: list, n: int) -> list[Row]:
    """`n` rows per prompt; a seeded request's j-th choice uses seed + j (distinct choices)."""
    rows = []
    for prompt, sampling in zip(prompts, samplings):
        for j in range(n):
            s = sampling if sampling.seed is None or j == 0 else replace(
                sampling, seed=(sampling.seed + j) % (1 << 63))
            rows.append(Row(list(prompt), s))
    return rows


def _whole_chars(text: str) -> str:
    """The text without a character cut in half at its end: ids that stop mid-character
    decode to U+FFFD there, which is held back (never sent), as vLLM does."""
    return text.rstrip("\ufffd")


def _offsets(chat: Any, ids: list[int]) -> list[int]:
    offsets, pos = [], 0
    for t in ids:
        offsets.append(pos)
        pos += len(chat.decode([t]))
    return offsets


def _extension(row: Row, raw: str) -> dict[str, Any]:
    finish = "eos" if row.eos else "stop_string" if row.stop_hit is not None else "length"
    return {"text": raw, "finish": finish,
            "policy_version": row.versions[-1] if row.versions else None,
            "policy_versions": list(row.versions)}


def _response(name: str, kind: str, choices: list, prompts: list, rows: list) -> dict[str, Any]:
    completion_tokens = sum(len(r.ids) for r in rows)
    prompt_tokens = sum(len(p) for p in prompts)
    return {"id": f"cmpl-{uuid.uuid4().hex[:12]}", "object": kind, "created": int(time.time()),
            "model": name, "choices": choices,
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def serve(spec: str, host: str = "127.0.0.1", port: int = 8001, *,
          max_tokens_limit: int | None = None, max_prompt_tokens: int | None = None,
          max_prompt_chars: int | None = None, chunk_tokens: int = 16, max_batch: int = 64,
          shutdown_timeout: float = 10.0, allow_weight_sync: bool = False,
          **options: Any) -> None:
    """Load `spec`, bind, print the ready line, serve until SIGTERM/SIGINT, drain, return."""
    from envgym.policy import load_policy
    from envgym.serving import run_server

    if allow_weight_sync:
        from envgym.agents.policies.server_weights import check_loopback
        check_loopback(host)
    policy = load_policy(spec, **options)
    limits = default_limits(policy, max_tokens_limit, max_prompt_tokens, max_prompt_chars)
    app = create_app(policy, limits=limits, chunk_tokens=chunk_tokens, max_batch=max_batch,
                     allow_weight_sync=allow_weight_sync)
    run_server(app, host=host, port=port, shutdown_timeout=shutdown_timeout,
               on_stop=app.state.stop,
               ready=f"serving {spec} on http://{host}:{{port}}/v1 (OpenAI-compatible; "
                     f"max_tokens <= {limits.max_tokens}, prompt <= "
                     f"{limits.max_prompt_tokens} tokens)")

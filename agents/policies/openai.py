"""`openai:URL#MODEL` — an httpx client of an OpenAI-compatible server (vLLM, SGLang, ours).

Token mode (default when the model's tokenizer can be loaded, from `tokenizer=` or MODEL):
prompts go to `/v1/completions` as token ids and the server is asked for the sampled ids
(`return_token_ids`, or vLLM's `return_tokens_as_token_ids`) and their log-probs, so
trajectories stay token-exact and trainable. Chat mode (`mode="chat"`, or no tokenizer) sends
messages to `/v1/chat/completions`; it is marked not trainable (`tokenizer is None`).

Requests run concurrently up to `concurrency`, with a timeout, and are retried with
exponential back-off on connection errors, 429 and 5xx.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import httpx

from envgym.errors import PolicyError
from envgym.policy import Completion, SamplingParams, row_sampling
from envgym.tokens import ChatTokenizer

__all__ = ["OpenAIPolicy"]


class OpenAIPolicy:
    def __init__(self, url: str, model: str | None = None, *, mode: str = "auto",
                 tokenizer: str | None = None, chat_template: str | None = None,
                 api_key: str | None = None, timeout: float = 120.0, retries: int = 4,
                 backoff: float = 0.5, concurrency: int = 32, prompts_per_request: int = 1):
        self.base = url.rstrip("/") if url.rstrip("/").endswith("/v1") else url.rstrip("/") + "/v1"
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.concurrency, self.per_request = concurrency, max(1, prompts_per_request)
        self.model = model or self._first_model()
        self.name = f"openai:{url}#{self.model}"
        self.tokenizer, self.chat = None, None
        if mode != "chat":
            self._load_tokenizer(tokenizer or self.model, chat_template, required=mode == "tokens")

    @property
    def trainable(self) -> bool:
        return self.tokenizer is not None

    # ---- generation ------------------------------------------------------------------------

    per_row_sampling = True
    """`generate` takes one `SamplingParams` per prompt (see `envgym.policy`)."""

    def generate(self, prompts: Sequence[Any],
                 sampling: SamplingParams | Sequence[SamplingParams]) -> list[Completion]:
        """One completion per prompt; each row is sent with its own params and seed, so
        seeds never collide across calls (a single seeded params seeds row i by
        `mix_seed(seed, i)`, as on every backend)."""
        rows = row_sampling(sampling, len(prompts))
        if self.tokenizer is not None:
            calls = [self._completions([list(prompts[i]) for i in chunk], rows[chunk[0]])
                     for chunk in self._chunks(rows)]
        else:
            calls = [self._chat(p, r) for p, r in zip(prompts, rows)]
        results = _run(self._gather(calls))
        return [c for r in results for c in r]

    def _chunks(self, rows: list[SamplingParams]) -> list[list[int]]:
        """Consecutive rows per request: a seeded request samples all its prompts with one
        seed (identical prompts would come back identical), so seeded rows go one each;
        unseeded rows with equal params share up to `prompts_per_request`."""
        chunks: list[list[int]] = []
        for i, row in enumerate(rows):
            last = chunks[-1] if chunks else None
            if (last and row.seed is None and rows[last[0]] == row
                    and len(last) < self.per_request):
                last.append(i)
            else:
                chunks.append([i])
        return chunks

    def score(self, contexts: Sequence[str], targets: Sequence[str]) -> list[list[float]]:
        """Target log-probs via `echo` prompt log-probs (needs token mode)."""
        if self.chat is None:
            raise PolicyError(f"{self.name}: scoring needs token mode (a tokenizer).")
        return self.score_ids([(self.chat.encode(c), self.chat.encode(t))
                               for c, t in zip(contexts, targets)])

    def score_ids(self, pairs: Sequence[tuple[list[int], list[int]]]) -> list[list[float]]:
        """Like `score`, on token ids (IG scores the exact ids the policy saw)."""
        if self.chat is None:
            raise PolicyError(f"{self.name}: scoring needs token mode (a tokenizer).")
        return _run(self._gather([self._echo(list(c), list(t)) for c, t in pairs]))

    async def _gather(self, calls: list) -> list:
        limit = asyncio.Semaphore(self.concurrency)
        async with httpx.AsyncClient(timeout=self.timeout, headers=self.headers) as client:
            async def one(call):
                async with limit:
                    return await call(client)
            return await asyncio.gather(*(one(c) for c in calls))

    def _completions(self, prompts: list[list[int]], sampling: SamplingParams):
        body = {**_params(sampling), "model": self.model, "logprobs": 0, "echo": False,
                "prompt": prompts[0] if len(prompts) == 1 else prompts,
                "return_token_ids": True, "return_tokens_as_token_ids": True,
                "include_stop_str_in_output": True}

        async def call(client):
            data = await self._post(client, "/completions", body)
            return [self._completion(c) for c in sorted(data["choices"], key=lambda c: c["index"])]
        return call

    def _chat(self, messages: list[dict[str, Any]], sampling: SamplingParams):
        last = messages[-1]["role"] == "assistant" if messages else False
        body = {**_params(sampling), "model": self.model, "messages": messages,
                "logprobs": True, "add_generation_prompt": not last,
                "continue_final_message": last}

        async def call(client):
            choice = (await self._post(client, "/chat/completions", body))["choices"][0]
            content = choice.get("logprobs") or {}
            lps = [t["logprob"] for t in content.get("content") or []]
            return [Completion(_with_stop(choice), [], lps, _finish(choice.get("finish_reason")))]
        return call

    def _echo(self, context: list[int], target: list[int]):
        body = {"model": self.model, "prompt": context + target, "max_tokens": 1, "echo": True,
                "logprobs": 0, "temperature": 0.0}

        async def call(client):
            choice = (await self._post(client, "/completions", body))["choices"][0]
            lps = choice["logprobs"]["token_logprobs"]
            return [float(x) for x in lps[len(context):len(context) + len(target)]]
        return call

    def _completion(self, choice: dict[str, Any]) -> Completion:
        logprobs = choice.get("logprobs") or {}
        ids = choice.get("token_ids")
        if ids is None:  # vLLM's return_tokens_as_token_ids: tokens look like "token_id:123"
            ids = [int(t.rpartition(":")[2]) for t in logprobs.get("tokens") or []]
        ids = [int(i) for i in ids]
        eos = bool(ids) and ids[-1] in self.chat.eos_token_ids
        text = self.chat.decode(ids[:-1] if eos else ids)
        return Completion(text, ids, [float(x) for x in logprobs.get("token_logprobs") or []],
                          _finish(choice.get("finish_reason")), eos)

    async def _post(self, client: httpx.AsyncClient, path: str, body: dict) -> dict[str, Any]:
        for attempt in range(self.retries + 1):
            try:
                response = await client.post(self.base + path, json=body)
                if response.status_code == 429 or response.status_code >= 500:
                    raise httpx.HTTPStatusError(f"{response.status_code}: {response.text[:200]}",
                                                request=response.request, response=response)
                if response.status_code >= 400:
                    raise PolicyError(f"{self.name}: {path} answered {response.status_code}: "
                                      f"{response.text[:300]}")
                return response.json()
            except (httpx.TransportError, httpx.HTTPStatusError) as e:
                if attempt == self.retries:
                    raise PolicyError(f"{self.name}: {path} failed after {attempt + 1} "
                                      f"attempts: {e}") from e
                await asyncio.sleep(self.backoff * 2 ** attempt)
        raise AssertionError("unreachable")

    # ---- set-up ----------------------------------------------------------------------------

    def _first_model(self) -> str:
        try:
            r = httpx.get(self.base + "/models", headers=self.headers, timeout=self.timeout)
            r.raise_for_status()
            return r.json()["data"][0]["id"]
        except (httpx.HTTPError, KeyError, IndexError) as e:
            raise PolicyError(f"Cannot list models at {self.base}: {e}; "
                              "name the model: openai:URL#MODEL.") from e

    def _load_tokenizer(self, source: str, chat_template: str | None, required: bool) -> None:
        from transformers import AutoTokenizer
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source)
        except (OSError, ValueError) as e:
            if required:
                raise PolicyError(f"Token mode needs the tokenizer of {source!r}: {e}") from e
            return
        self.chat = ChatTokenizer(self.tokenizer, chat_template)

    def close(self) -> None:
        """Nothing persistent to release: each generate call opens and closes its client."""


def _params(sampling: SamplingParams) -> dict[str, Any]:
    seed = sampling.seed
    body = {"max_tokens": sampling.max_tokens, "temperature": sampling.temperature,
            "top_p": sampling.top_p, "stop": list(sampling.stop) or None, "seed": seed}
    if sampling.top_k > 0:
        body["top_k"] = sampling.top_k
    return {k: v for k, v in body.items() if v is not None}


def _with_stop(choice: dict[str, Any]) -> str:
    """Chat text with the matched stop string put back: OpenAI-style servers strip it, but
    the environment parses it (`</search>` closes the call). vLLM names it in `stop_reason`."""
    text = choice["message"]["content"] or ""
    stop = choice.get("stop_reason")
    if choice.get("finish_reason") == "stop" and isinstance(stop, str) and not text.endswith(stop):
        text += stop
    return text


def _finish(reason: str | None) -> str:
    return "length" if reason == "length" else "stop"


def _run(coro: Any) -> Any:
    """Run a coroutine from sync code, also when called from inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()

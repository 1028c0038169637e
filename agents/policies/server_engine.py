"""The scheduler behind `serve-policy`: every live request decodes in bounded chunks.

Each *round* takes up to `max_batch` live rows (one row is one choice of one request) and
calls `policy.generate` once for all of them, each row with its own `SamplingParams`
(temperature, top-p, seed) and at most `chunk_tokens` new tokens. A row that is not finished
goes back into the pool with its prompt extended by what it generated, so:

* a request never waits for another's whole generation, only for the round in flight;
* a disconnected client's rows are dropped before the next round (`Row.cancel`);
* rows with different sampling settings share one batched call (a policy whose `generate`
  takes only one `SamplingParams` gets one call per distinct setting instead);
* a batched call that raises is retried row by row, so one bad row fails alone.

Weight loads (`load_weights`) are jobs like scoring: they run between rounds, so a chunk is
always sampled by one version; a row in flight goes on with the new weights and lists every
version that sampled it (`Row.versions`).

The price is one re-prefill per chunk; `chunk_tokens` trades it against the wait above.

Seeded rows reproduce themselves whatever the load. Each chunk of a seeded row is sampled
with its own seed, `mix_seed(seed, chunk index)`, always passed per row (never collapsed into
one setting for the batch, which a policy would re-derive per batch position). And a seeded
row decodes in a forward of its own: alone, unpadded and from a full prefill that bypasses
the prefix cache (`policy.generate_isolated` where the backend has it, else a one-row call),
so its logits depend only on its own ids and the weights, never on what else is in the
round. Its chunk boundaries depend only on its own progress. The price is that seeded rows
are not batched with each other; unseeded rows still share one batched call.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from envgym.policy import Completion, SamplingParams, mix_seed

__all__ = ["Engine", "Row", "ShuttingDown"]


class ShuttingDown(Exception):
    """The server is stopping: the row was not (fully) generated."""


@dataclass(eq=False)
class Row:
    """One choice being generated. `ids` excludes the prompt; `finish` is set when done."""

    prompt: list[int]
    params: SamplingParams
    ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish: str | None = None  # "stop" | "length" once done
    eos: bool = False  # ended with an end-of-sequence token
    stop_hit: str | None = None  # the stop string that ended it
    cancelled: bool = False
    error: BaseException | None = None
    chunks: int = 0
    versions: list[int] = field(default_factory=list)  # the weights that sampled its chunks
    future: asyncio.Future | None = None
    listener: asyncio.Queue | None = None  # streaming: gets the row after every round

    def cancel(self) -> None:
        self.cancelled = True

    @property
    def done(self) -> bool:
        return self.finish is not None or self.cancelled or self.error is not None


class Engine:
    """Runs rounds until stopped; `submit` rows and await their futures."""

    def __init__(self, policy: Any, *, chunk_tokens: int = 16, max_batch: int = 64,
                 decode: Callable[[Sequence[int]], str] | None = None):
        self.policy, self.chunk, self.max_batch = policy, max(1, chunk_tokens), max(1, max_batch)
        self.decode = decode or policy.chat.decode
        self.pool: deque[Row] = deque()
        self.jobs: deque[tuple[Callable[[], Any], asyncio.Future]] = deque()
        self.wake = asyncio.Event()
        self.per_row: bool | None = None  # whether generate takes one SamplingParams per row
        self.stopping = False
        self.rounds = 0
        self.busy = False
        self.version = 0  # the served weights' version (`load_weights`)

    # ---- the request side ------------------------------------------------------------------

    def submit(self, rows: Sequence[Row]) -> None:
        if self.stopping:
            raise ShuttingDown("the server is shutting down")
        loop = asyncio.get_running_loop()
        for row in rows:
            row.future = loop.create_future()
            self.pool.append(row)
        self.wake.set()

    async def call(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the engine's thread between rounds (scoring shares the model)."""
        if self.stopping:
            raise ShuttingDown("the server is shutting down")
        future = asyncio.get_running_loop().create_future()
        self.jobs.append((fn, future))
        self.wake.set()
        return await future

    async def load_weights(self, load: Callable[[], Any], version: int) -> None:
        """Run `load` (it replaces the policy's weights) between two rounds and serve
        `version` from the next round on; rows in flight go on with the new weights
        (`Row.versions` lists every version that sampled them)."""
        def job() -> None:
            load()
            self.version = version
        await self.call(job)

    @property
    def live(self) -> int:
        return sum(not r.done for r in self.pool)

    # ---- the loop --------------------------------------------------------------------------

    async def run(self) -> None:
        while True:
            self._reap()
            if not self.pool and not self.jobs:
                self.wake.clear()
                await self.wake.wait()
                continue
            self.busy = True
            try:
                await self._jobs()
                batch = self._take()
                if batch:
                    await asyncio.to_thread(self._round, batch)
                    self.rounds += 1
                    for row in batch:
                        if not row.versions or row.versions[-1] != self.version:
                            row.versions.append(self.version)
                        self._publish(row)
            finally:
                self.busy = False

    def abort(self, reason: str = "the server is shutting down") -> None:
        """Fail every queued row and job now (shutdown deadline reached)."""
        self.stopping = True
        for row in self.pool:
            if not row.done:
                row.error = ShuttingDown(reason)
            self._publish(row)
        self.pool.clear()
        while self.jobs:
            _, future = self.jobs.popleft()
            if not future.done():
                future.set_exception(ShuttingDown(reason))

    def _reap(self) -> None:
        for row in [r for r in self.pool if r.done]:
            self.pool.remove(row)
            self._publish(row)

    def _take(self) -> list[Row]:
        """The next `max_batch` live rows; taken rows move to the back (round robin)."""
        batch = []
        for _ in range(min(len(self.pool), self.max_batch)):
            row = self.pool.popleft()
            self.pool.append(row)
            if not row.done:
                batch.append(row)
        return batch

    async def _jobs(self) -> None:
        while self.jobs:
            fn, future = self.jobs.popleft()
            try:
                result = await asyncio.to_thread(fn)
            except Exception as e:  # noqa: BLE001 - reported to the waiting request
                if not future.done():
                    future.set_exception(e)
            else:
                if not future.done():
                    future.set_result(result)

    def _publish(self, row: Row) -> None:
        if row.listener is not None:
            row.listener.put_nowait(row)
        if row.done and row.future is not None and not row.future.done():
            if row.error is not None:
                row.future.set_exception(row.error)
            else:
                row.future.set_result(row)

    # ---- one round (on a worker thread) ----------------------------------------------------

    def _round(self, rows: list[Row]) -> None:
        shared = [r for r in rows if r.params.seed is None]
        if shared:
            self._shared_round(shared)
        for row in rows:
            if row.params.seed is not None:
                self._isolated_round(row)

    def _shared_round(self, rows: list[Row]) -> None:
        """Unseeded rows: one batched call; a call that raises is retried row by row."""
        prompts = [r.prompt + r.ids for r in rows]
        params = [self._chunk_params(r) for r in rows]
        try:
            outs = self._generate(prompts, params)
        except Exception:  # noqa: BLE001 - isolate the row that fails
            if len(rows) == 1:
                rows[0].error = _error()
                return
            outs = []
            for prompt, p, row in zip(prompts, params, rows):
                try:
                    outs += self._generate([prompt], [p])
                except Exception:  # noqa: BLE001
                    row.error = _error()
                    outs.append(None)
        for row, out, p in zip(rows, outs, params):
            if out is not None:
                self._advance(row, out, p.max_tokens)

    def _isolated_round(self, row: Row) -> None:
        """A seeded row's chunk, computed as if it were the only request on the server."""
        p = self._chunk_params(row)
        prompt = row.prompt + row.ids
        try:
            isolated = getattr(self.policy, "generate_isolated", None)
            out = (isolated(prompt, p) if isolated is not None  # one setting, one row: both
                   else list(self.policy.generate([prompt], p))[0])  # sample mix_seed(seed, 0)
        except Exception:  # noqa: BLE001 - the row fails alone
            row.error = _error()
            return
        self._advance(row, out, p.max_tokens)

    def _chunk_params(self, row: Row) -> SamplingParams:
        left = row.params.max_tokens - len(row.ids)
        seed = row.params.seed
        if seed is not None:
            seed = mix_seed(seed, row.chunks)
        return replace(row.params, max_tokens=min(self.chunk, left), seed=seed)

    def _generate(self, prompts: list[list[int]], params: list[SamplingParams]
                  ) -> list[Completion]:
        if len(set(params)) == 1:
            return list(self.policy.generate(prompts, params[0]))
        if self.per_row is not False:
            try:
                out = list(self.policy.generate(prompts, params))
                self.per_row = True
                return out
            except (TypeError, AttributeError):
                if self.per_row:
                    raise
                self.per_row = False
        return self._grouped(prompts, params)

    def _grouped(self, prompts: list[list[int]], params: list[SamplingParams]
                 ) -> list[Completion]:
        """One call per distinct setting: for a policy with one `SamplingParams` per call."""
        out: list[Completion | None] = [None] * len(prompts)
        groups: dict[SamplingParams, list[int]] = {}
        for i, p in enumerate(params):
            groups.setdefault(p, []).append(i)
        for p, idx in groups.items():
            for i, c in zip(idx, self.policy.generate([prompts[i] for i in idx], p)):
                out[i] = c
        return out  # type: ignore[return-value]

    def _advance(self, row: Row, out: Completion, budget: int) -> None:
        new_ids, new_lps = list(out.token_ids)[:budget], list(out.logprobs)[:budget]
        before = len(row.ids)
        row.ids += new_ids
        row.logprobs += new_lps
        row.chunks += 1
        if out.ended_with_eos and len(new_ids) == len(out.token_ids):
            row.finish, row.eos = "stop", True
            return
        if row.params.stop and self._cut_at_stop(row, before):
            return
        if len(row.ids) >= row.params.max_tokens or not new_ids:
            row.finish = "length"

    def _cut_at_stop(self, row: Row, before: int) -> bool:
        """End the row at the first token completing a stop string (it may span chunks)."""
        stops = row.params.stop
        longest = max(map(len, stops))
        start = len(self.decode(row.ids[:before])) if before else 0
        text = self.decode(row.ids)
        window = text[max(0, start - longest):]
        if not any(s in window for s in stops):
            return False
        for end in range(before + 1, len(row.ids) + 1):  # the shortest prefix that matches
            tail = self.decode(row.ids[:end])[max(0, start - longest):]
            hit = next((s for s in stops if s in tail), None)
            if hit is not None:
                del row.ids[end:], row.logprobs[end:]
                row.finish, row.stop_hit = "stop", hit
                return True
        return False


def _error() -> BaseException:
    import sys
    return sys.exc_info()[1] or RuntimeError("generation failed")


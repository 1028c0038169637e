"""The rollout engine's batcher: one `generate` call per turn over every live episode.

The rule. A call fires when every live episode that uses the policy is waiting for it, those
still inside an environment step included, or once no prompt has arrived for `wait` seconds.
Waiting for all is right because on one device a batch of 16 costs about what a batch of 12
does: firing early and serving the stragglers with a second call nearly doubles the turn. The
`wait` timeout is the escape hatch: a slow environment's episode joins the next call instead
of holding everyone up. Arrivals wake the batcher through an event, not by polling, so
waiting costs the generating thread no GIL time.

Seeds. Each prompt arrives with its own sampling seed (the engine derives it from the run
seed, episode, member and turn), and a policy with `per_row_sampling` gets one
`SamplingParams` per row: which episodes happen to share a call, a matter of thread timing,
never changes what any of them samples. A policy without it gets one `SamplingParams` per
call, seeded by the first row (then sampling depends on the batching, as it must).
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from envgym.errors import PolicyError
from envgym.policy import Completion, SamplingParams

__all__ = ["Batcher"]


class Batcher:
    """Gathers prompts of live episodes into one `generate` call (see the module docstring)."""

    def __init__(self, policy: Any, sampling: SamplingParams, wait: float):
        self.policy, self.sampling, self.wait = policy, sampling, wait
        self.queue: list[tuple[Any, int | None, asyncio.Future]] = []
        self.members = self.away = self.calls = 0
        self.busy = False
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="envgym-generate")
        self.generate_s = 0.0
        self.sizes: list[int] = []
        """Prompts per `generate` call, for benchmarks and tests of the batching."""
        self.changed: asyncio.Event | None = None

    async def submit(self, prompt: Any, seed: int | None = None) -> Completion:
        """Queue one prompt, to be sampled with `seed`; resolves to its completion."""
        future = asyncio.get_running_loop().create_future()
        self.queue.append((prompt, seed, future))
        self.kick()
        return await future

    def kick(self) -> None:
        if self.changed is not None:
            self.changed.set()
        if self.queue and not self.busy:
            self.busy = True
            asyncio.ensure_future(self._flush())

    def leave(self) -> None:
        """An episode (or agent) of this policy is done: stop waiting for it."""
        self.members -= 1
        self.kick()

    async def _gather(self) -> None:
        """Wait until every member is queued or none has arrived for `wait` seconds."""
        self.changed = self.changed or asyncio.Event()
        deadline, seen = time.monotonic() + self.wait, len(self.queue)
        while len(self.queue) < self.members and (left := deadline - time.monotonic()) > 0:
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                return
            if len(self.queue) > seen:  # an arrival: the rest are likely close behind
                deadline, seen = time.monotonic() + self.wait, len(self.queue)

    def params(self, seeds: list[int | None]) -> SamplingParams | list[SamplingParams]:
        """Per-row params where the policy takes them, else one per call."""
        if getattr(self.policy, "per_row_sampling", False):
            return [self.sampling.with_seed(s) for s in seeds]
        return self.sampling.with_seed(seeds[0])

    async def _flush(self) -> None:
        await self._gather()
        batch, self.queue = self.queue, []
        self.sizes.append(len(batch))
        self.calls += 1
        sampling = self.params([s for _, s, _ in batch])
        start = time.perf_counter()
        try:
            result = await asyncio.get_running_loop().run_in_executor(
                self.pool, self.policy.generate, [p for p, _, _ in batch], sampling)
        except Exception as e:  # noqa: BLE001 - fails the episodes of this call, not the run
            for _, _, future in batch:
                future.set_exception(PolicyError(f"policy failed: {type(e).__name__}: {e}"))
        else:
            for (_, _, future), completion in zip(batch, result, strict=True):
                future.set_result(completion)
        self.generate_s += time.perf_counter() - start
        self.busy = False
        self.kick()

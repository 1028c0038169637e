"""The taskset: seeded sums and products; the reward reads the last reply of the trace."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import verifiers.v1 as vf


class ArithConfig(vf.TasksetConfig):
    size: int = 24
    """How many questions the taskset yields."""


class ArithData(vf.TaskData):
    answer: int


class ArithTask(vf.Task[ArithData, vf.State, vf.TaskConfig]):
    @vf.reward(weight=1.0)
    async def correct(self, trace: vf.Trace) -> float:
        numbers = re.findall(r"-?\d+", trace.last_reply or "")
        return float(len(numbers) == 1 and int(numbers[0]) == self.data.answer)

    @vf.reward(weight=0.1)
    async def brief(self, trace: vf.Trace) -> float:
        """A short reply earns the bonus only when it is right: paid alone, it paid an
        empty answer more than an honest refusal (envgym check's hack_empty found it)."""
        right = await self.correct(trace)
        return float(right == 1.0 and len((trace.last_reply or "").strip()) <= 12)


class ArithTaskset(vf.Taskset[ArithTask, ArithConfig]):
    def load(self) -> Iterator[ArithTask]:
        rng = random.Random(0)
        for i in range(self.config.size):
            a, b = rng.randint(2, 60), rng.randint(2, 60)
            op, value = ("+", a + b) if i % 2 == 0 else ("*", a * b)
            yield ArithTask(ArithData(id=f"arith-{i}", prompt=f"What is {a} {op} {b}? "
                                      "Answer with the number only.", answer=value,
                                      system_prompt="You are a careful calculator."))

"""A tiny single-turn arithmetic environment for like-for-like learner benchmarks.

"Compute a+b=" with a, b drawn from the seed; reward 1 when the first integer in the answer is
the sum, else 0 (`reward="exact"`), or partial credit by distance (`reward="graded"`: a start
that writes numbers near the sum but cannot add, like the shipped base model, then still gets
groups with unequal rewards, i.e. a learning signal). It exists so that envgym's trainer and
TRL's GRPOTrainer can be timed on the same prompts with the same grader (`bench/learner_vs_trl.py`, `bench/rollout.py`). Importing
this module registers it as `bench/Arith-v0`.
"""

from __future__ import annotations

import re

import numpy as np

import envgym
from envgym.core import StepResult, TextEnv, user

ENV_ID = "bench/Arith-v0"
_INT = re.compile(r"-?\d+")


def problem(seed: int) -> tuple[str, int]:
    """The prompt text and the answer of task `seed` (numbers below 100)."""
    a, b = (int(x) for x in np.random.default_rng(seed).integers(0, 100, 2))
    return f"Compute {a}+{b}=", a + b


REWARDS = ("exact", "graded")


def grade(text: str, answer: int, reward: str = "exact") -> float:
    """1.0 when the first integer in `text` is `answer`; a longer or padded answer is wrong.
    `graded`: otherwise 1 / (1 + |N - answer|) for that first integer N, 0 without one."""
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {REWARDS}, not {reward!r}")
    match = _INT.search(text)
    if match is None:
        return 0.0
    miss = abs(int(match.group()) - answer)
    return 1.0 / (1.0 + miss) if reward == "graded" else float(miss == 0)


class ArithEnv(TextEnv):
    """One turn: the prompt, one answer, the reward."""

    def __init__(self, max_turns: int = 1, reward: str = "exact"):
        super().__init__(max_turns=max_turns)
        grade("", 0, reward)  # refuses an unknown reward at construction, not at the first step
        self.reward = reward

    def _reset(self, seed, options):
        text, self.answer = problem(seed)
        self.task_id = f"arith-{seed}"
        return [user(text)], {}

    def _step(self, action):
        reward = grade(action, self.answer, self.reward)
        return StepResult([], {"correct": reward}, terminated=True,
                          info={"outcome": {"success": reward == 1.0, "score": reward}})


if ENV_ID not in envgym.registry():
    envgym.register(ENV_ID, ArithEnv, description="Compute a+b= (benchmark task)")

"""Scripted baseline policies (`scripted:NAME`).

Every environment registers baselines such as `random`, `heuristic` and `oracle`. A scripted
policy is made fresh per episode with a seed, and each turn it sees the environment and the
conversation so far. Only the oracle may look at privileged state (`env.task`, evidence,
reference solutions); heuristics must work from the conversation alone, which keeps them
honest baselines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envgym.spaces import Message

__all__ = ["ScriptedPolicy", "parse_scripted_spec"]

# Mixed into every scripted policy's seed. Callers seed a policy with the episode's own task
# seed (hack checks: `seed + ep` for both) or with one that equals it (SFT at run seed 0:
# `0 * 100_003 + k` against task `k`), and environments draw their tasks from
# `default_rng(task_seed)`. Without the tag the policy replays the task's stream: at run seed 0
# the `guess` warm start answered A on every two-option trend task and only C or D on anomaly
# tasks, a letter prior tied to the task type instead of a uniform guess.
_STREAM_TAG = 0x5C121F7D


class ScriptedPolicy:
    """Base class: one instance per episode; override `act`."""

    def __init__(self, seed: int = 0, **options: Any):
        self.rng = np.random.default_rng(None if seed is None else [_STREAM_TAG, int(seed)])
        self.options = options

    def act(self, env: Any, messages: list[Message]) -> str:
        """The next assistant turn given the environment and the conversation so far."""
        raise NotImplementedError


def parse_scripted_spec(spec: str) -> str:
    """`scripted:oracle` -> `oracle`."""
    kind, _, name = spec.partition(":")
    if kind != "scripted" or not name:
        raise ValueError(f"not a scripted policy spec: {spec!r}")
    return name

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


class ScriptedPolicy:
    """Base class: one instance per episode; override `act`."""

    def __init__(self, seed: int = 0, **options: Any):
        self.rng = np.random.default_rng(seed)
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

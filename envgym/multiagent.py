"""`MultiAgentTextEnv`: the PettingZoo `ParallelEnv` form of the step API.

Observations, actions, rewards and infos are dicts keyed by agent. Every agent carries a
`trainable` flag so that a simulated party (a fixed model, a scripted peer) can share the
episode with the policy being trained; the learner only builds losses for trainable agents.
The same `info` keys as `TextEnv` apply per agent.

Training (`envgym train`, `agents/structure.py`): the engine's `collect_multi` plays every
agent; agents named in the env config's `agents` table play that fixed policy and are made
`trainable=False` (their trajectories feed reward stages such as `calibrated`, then leave the
batch); the rest play the learner's policy. Groups are per (task, agent). State that must
outlive an episode (IRT abilities, reward histories) belongs to the run: implement
`bind_run` / `update_run` as described in `envgym.runstate`.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import numpy as np
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from envgym.spaces import Conversation, Message, Utterance

__all__ = ["MultiAgentTextEnv"]


class MultiAgentTextEnv(ParallelEnv[str, list, str]):
    """Base class of multi-agent text environments; subclasses implement reset and step."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "name": "envgym_multiagent"}
    shared_resources: ClassVar[tuple[str, ...]] = ()

    def __init__(self, agent_ids: list[str], trainable: dict[str, bool] | None = None):
        self.possible_agents = list(agent_ids)
        self.agents: list[str] = []
        self.trainable = {a: True for a in agent_ids} | dict(trainable or {})
        self._observation_spaces = {a: Conversation() for a in agent_ids}
        self._action_spaces = {a: Utterance() for a in agent_ids}
        self.np_random, _ = seeding.np_random(None)
        self._closed = False

    def observation_space(self, agent: str) -> Conversation:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> Utterance:
        return self._action_spaces[agent]

    def seed_rng(self, seed: int | None) -> int:
        """Seed `np_random` and return the task seed (drawn when `seed` is None)."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
            for i, agent in enumerate(self.possible_agents):
                self._action_spaces[agent].seed(seed + i)
            return seed
        return int(self.np_random.integers(2**31))

    def fork(self) -> MultiAgentTextEnv:
        memo = {id(getattr(self, n)): getattr(self, n) for n in self.shared_resources if hasattr(self, n)}
        return copy.deepcopy(self, memo)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._close()

    def _close(self) -> None:
        """Release resources (called once)."""

    def __enter__(self) -> MultiAgentTextEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def summarize(cls, outcomes: list[dict[str, Any]]) -> dict[str, float]:
        keys = {k for o in outcomes for k, v in o.items() if isinstance(v, (int, float, bool))}
        return {k: float(np.mean([float(o[k]) for o in outcomes if k in o])) for k in sorted(keys)}


def agent_messages(text: str) -> list[Message]:
    return [{"role": "user", "content": text}]

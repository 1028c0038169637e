"""Value-aware trajectory rectification (MIND §4.5), a wrapper for inference, not training.

When an action fires a trigger (MALFORMED, REPEATED_INQUIRY, GENERIC_LOW_YIELD,
LOW_RELIABILITY, BUDGET_VIOLATION, UNSAFE_OFF_TRACK): first one constrained self-retry per
turn through `regenerate(messages, feedback)`, then, if it still fires, a PRB-guided fallback
(at most 2 per episode); at most 3 rectifications per episode in all. A trigger beyond that is
a rectification failure: the action goes through unchanged and a `rectification_failure`
penalty is added to its reward components.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium

from envgym.spaces import Message

Regenerate = Callable[[list[Message], str], str]


class Rectifier(gymnasium.Wrapper):
    def __init__(self, env: gymnasium.Env, regenerate: Regenerate | None = None, *,
                 max_retries_per_turn: int = 1, max_fallbacks: int = 2, max_total: int = 3,
                 failure_penalty: float = -0.1):
        super().__init__(env)
        self.regenerate = regenerate
        self.max_retries, self.max_fallbacks, self.max_total = max_retries_per_turn, max_fallbacks, max_total
        self.failure_penalty = failure_penalty
        self.messages: list[Message] = []
        self.retries = self.fallbacks = self.total = 0

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self.messages = list(obs)
        self.retries = self.fallbacks = self.total = 0
        return obs, info

    def step(self, action: str):
        core = self.env.unwrapped
        log: list[dict[str, Any]] = []
        action, failed = self._rectify(core, action, log)
        obs, reward, terminated, truncated, info = self.env.step(action)
        if failed:
            info["reward_components"]["rectification_failure"] = self.failure_penalty
            reward += self.failure_penalty
        info["rectification"] = {"events": log, "total": self.total, "fallbacks": self.fallbacks,
                                 "failed": failed}
        self.messages += [{"role": "assistant", "content": action}, *obs]
        return obs, reward, terminated, truncated, info

    def _rectify(self, core: Any, action: str, log: list) -> tuple[str, bool]:
        triggers = core.triggers(action)
        if not triggers:
            return action, False
        if self.total >= self.max_total:
            log.append({"kind": "failure", "triggers": triggers})
            return action, True
        if self.regenerate is not None and self.max_retries > 0:
            feedback = ("Your turn triggered " + ", ".join(triggers) + ". Rewrite it following "
                        "the protocol, asking about an unresolved missing check.")
            action = self.regenerate(self.messages, feedback)
            self.total += 1
            log.append({"kind": "retry", "triggers": triggers})
            triggers = core.triggers(action)
            if not triggers:
                return action, False
        if core.stage == "II" and self.fallbacks < self.max_fallbacks and self.total < self.max_total:
            self.fallbacks += 1
            self.total += 1
            log.append({"kind": "fallback", "triggers": triggers})
            return core.fallback_action(), False
        if self.total >= self.max_total:
            log.append({"kind": "failure", "triggers": triggers})
            return action, True
        return action, False

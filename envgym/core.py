"""`TextEnv`: the one step API every single-agent envgym environment speaks.

It is a `gymnasium.Env[list[Message], str]`:

* `reset(*, seed=None, options=None) -> (observation, info)`; the seed picks the task, so the
  same seed gives the same task (what makes GRPO groups possible).
* `step(action: str) -> (observation, reward, terminated, truncated, info)`; the observation
  is the list of *new* chat messages. A message of role `"continuation"` asks the rollout
  engine to splice its text into the running assistant turn (Search-R1 style) instead of
  opening a new chat turn.

Subclasses implement `_reset` and `_step` and return a `StepResult`; this base class does the
bookkeeping every environment needs and used to get wrong: the reward is the sum of its
components, turns are counted, invalid actions are counted and the episode truncated after
`max_invalid_actions` in a row, stepping a finished episode is refused, and `info` always
carries the documented keys.

`info` keys (filled where they apply):

* `task_id` — group key: equal for the same task.
* `turn` — 1-based index of the step just taken (0 after reset).
* `reward_components` — named parts of the reward; they sum to `reward`.
* `outcome` — on the last step: `{"success": bool, "score": float, ...metrics}`.
* `parse_error` — why the action was malformed, or absent.
* `tool_calls` — the parsed calls, as `{"name", "arguments"}` dicts.
* `spans` — character spans of the action a step reward belongs to:
  `{"kind", "start", "end", "value"}` (e.g. the search query, for IG credit).
* `role` — who acted in hierarchical environments (`"controller"`, `"reasoner"`).
* `state_key` — canonical digest of the environment state, for GiGPO step grouping.
* `trajectory_meta` — on the last step: facts about the episode (e.g. a debate's mode) that
  the engine copies into `Trajectory.meta` for the estimators.
* `action_class` — a coarse label of the action (e.g. `"consult"`/`"direct"`) for IFPO.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium
import numpy as np

from envgym.errors import ResetNeeded
from envgym.spaces import Conversation, Message, Utterance
from envgym.tools import Tool

__all__ = ["StepResult", "TextEnv", "state_digest", "user", "system"]

FORMAT_PENALTY = -0.1


def user(content: str) -> Message:
    return {"role": "user", "content": content}


def system(content: str) -> Message:
    return {"role": "system", "content": content}


def state_digest(state: Any) -> str:
    """A short canonical digest of JSON-serialisable state (sorted keys), for `state_key`."""
    blob = json.dumps(state, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


@dataclass
class StepResult:
    """What a subclass's `_step` returns; the base class derives reward and info from it."""

    observation: list[Message]
    reward_components: dict[str, float] = field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    parse_error: str | None = None


class TextEnv(gymnasium.Env[list, str]):
    """Base class of single-agent text environments (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}
    tools: ClassVar[Sequence[Tool]] = ()
    shared_resources: ClassVar[tuple[str, ...]] = ()
    """Attribute names that `fork()` shares instead of copying (indexes, pools, clients)."""
    stop_sequences: tuple[str, ...] = ()
    """Strings that end an action (e.g. `</search>`): the engine passes them to every backend
    on every rollout and cuts the action text after the first one, so nothing the model
    writes after a stop (a self-written `<information>` block, say) reaches `step()`."""

    def __init__(self, *, max_turns: int = 8, max_invalid_actions: int = 3,
                 max_action_chars: int = 100_000, render_mode: str | None = None):
        self.observation_space = Conversation()
        self.action_space = Utterance()
        self.max_turns = max_turns
        self.max_invalid_actions = max_invalid_actions
        self.max_action_chars = max_action_chars
        self.render_mode = render_mode
        self.turn = 0
        self.task_id: str | None = None
        self._invalid_streak = 0
        self._done = True
        self._closed = False
        self._transcript: list[Message] = []

    # ---- the API ----------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[list[Message], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**31))
        self.turn, self._invalid_streak, self._done = 0, 0, False
        observation, info = self._reset(seed, dict(options or {}))
        self._transcript = list(observation)
        info = {"task_id": self.task_id, "turn": 0, **info}
        info.setdefault("state_key", self.state_key())
        return observation, info

    def step(self, action: str) -> tuple[list[Message], float, bool, bool, dict[str, Any]]:
        if self._done:
            raise ResetNeeded("step() called on a finished episode; call reset() first.")
        action = _coerce_action(action)
        self.turn += 1
        if len(action) > self.max_action_chars:
            result = self.invalid(f"the action has {len(action)} characters; the limit is "
                                  f"{self.max_action_chars}.")
        else:
            result = self._step(action)
        return self._finish(action, result)

    def fork(self) -> TextEnv:
        """An independent copy at the current state; shared resources are not copied."""
        memo = {id(getattr(self, name)): getattr(self, name) for name in self.shared_resources
                if hasattr(self, name)}
        return copy.deepcopy(self, memo)

    def close(self) -> None:
        """Release resources. Idempotent; subclasses override `_close`."""
        if not self._closed:
            self._closed = True
            self._close()

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self.tools]

    def state_key(self) -> str:
        """Digest of `_state()`, the canonical state GiGPO groups steps by."""
        return state_digest(self._state())

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return "\n".join(f"[{m['role']}] {m['content']}" for m in self._transcript)
        return None

    @classmethod
    def summarize(cls, outcomes: list[dict[str, Any]]) -> dict[str, float]:
        """Aggregate episode outcomes into metrics; default: the mean of numeric fields."""
        keys = {k for o in outcomes for k, v in o.items() if isinstance(v, (int, float, bool))}
        return {k: float(np.mean([float(o[k]) for o in outcomes if k in o])) for k in sorted(keys)}

    # ---- helpers for subclasses -------------------------------------------------------------

    def invalid(self, error: str, hint: str = "", penalty: float = FORMAT_PENALTY) -> StepResult:
        """A malformed action: explain it, charge the format penalty, keep the episode alive."""
        text = f"Invalid action: {error}" + (f"\n{hint}" if hint else "")
        return StepResult([user(text)], {"format": penalty}, parse_error=error)

    def out_of_turns(self) -> bool:
        return self.turn >= self.max_turns

    # ---- to implement -----------------------------------------------------------------------

    def _reset(self, seed: int, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        """Start the task chosen by `seed` (or `options`); set `self.task_id`."""
        raise NotImplementedError

    def _step(self, action: str) -> StepResult:
        """Apply one assistant turn; never raise on bad input (use `self.invalid`)."""
        raise NotImplementedError

    def _state(self) -> Any:
        """JSON-serialisable canonical state for `state_key`; override for richer grouping."""
        return {"task": self.task_id, "turn": self.turn}

    def _close(self) -> None:
        """Release resources held by this instance (called once)."""

    # ---- internals --------------------------------------------------------------------------

    def _finish(self, action: str, result: StepResult):
        self._invalid_streak = self._invalid_streak + 1 if result.parse_error else 0
        truncated = result.truncated
        if not result.terminated and self._invalid_streak >= self.max_invalid_actions:
            truncated = True
            result.info.setdefault("truncation", "invalid_actions")
        elif not result.terminated and self.out_of_turns():
            truncated = True
            result.info.setdefault("truncation", "max_turns")
        components = {k: float(v) for k, v in result.reward_components.items()}
        info = {"task_id": self.task_id, "turn": self.turn, "reward_components": components,
                **result.info}
        if result.parse_error:
            info["parse_error"] = result.parse_error
        info.setdefault("state_key", self.state_key())
        self._done = result.terminated or truncated
        if self._done:
            info.setdefault("outcome", self._outcome_on_truncation())
        self._transcript += [{"role": "assistant", "content": action}, *result.observation]
        return result.observation, float(sum(components.values())), result.terminated, truncated, info

    def _outcome_on_truncation(self) -> dict[str, Any]:
        """Outcome when an episode ends without the subclass providing one."""
        return {"success": False, "score": 0.0}


def _coerce_action(action: Any) -> str:
    """Accept bytes and other junk without raising: the checker fuzzes with it."""
    if isinstance(action, str):
        return action
    if isinstance(action, (bytes, bytearray)):
        return bytes(action).decode("utf-8", errors="replace")
    return str(action)

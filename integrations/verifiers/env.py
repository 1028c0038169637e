"""`verifiers:ID`: an installed verifiers (v1) taskset as a `TextEnv`.

verifiers loads a taskset by its installed module name (`vf.taskset_config_type(ID)`,
`vf.load_taskset(config)`); `make("verifiers:ID", **kwargs)` passes the keyword arguments
envgym does not own to the taskset's config. The seed picks a task (`seed mod N` of a finite
taskset; the seed-th of an infinite one). The opening messages are the task's system prompt
and prompt; the model's reply is recorded in a verifiers `Trace`, the task scores it with its
own `@vf.reward` functions (`Task.score`), and each weighted reward becomes a named
component. One reply per episode: tasksets that need toolsets or a custom `Env.run` (user
simulators, games) are refused at construction with the reason.

A reward that is unscored, NaN, infinite or outside `reward_range` fails the episode
(`ImportedEnvError`), as does scoring that raises or runs past `timeout`. The default range
takes every reward's score in [0, 1] and adds up the weights.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from envgym.integrations.imported import (
    ImportedEnvError,
    call_with_timeout,
    checked_reward,
    credit_support,
)
from envgym.integrations.imported import reward_range as parse_range

from envgym.core import StepResult, TextEnv, system, user
from envgym.errors import InvalidConfig

__all__ = ["VerifiersEnv", "load_taskset", "score_reply"]


def load_taskset(taskset_id: str, args: dict[str, Any]) -> Any:
    """verifiers' own loader for an installed taskset, with `args` in its config."""
    try:
        import verifiers.v1 as vf
    except ImportError:
        raise InvalidConfig("verifiers:ID needs the `verifiers` package: "
                            "pip install 'envgym[verifiers]'") from None

    try:
        config_type = vf.taskset_config_type(taskset_id)
    except (ModuleNotFoundError, TypeError, AttributeError, ValueError) as e:
        raise InvalidConfig(f"verifiers: cannot load taskset {taskset_id!r}: {e}") from None
    try:
        config = config_type.model_validate({**args, "id": taskset_id})
    except Exception as e:  # pydantic's ValidationError, with the field named
        raise InvalidConfig(f"verifiers: bad arguments for taskset {taskset_id!r}: {e}") from None
    return vf.load_taskset(config)


def score_reply(task: Any, messages: list[dict[str, str]], reply: str) -> Any:
    """A verifiers `Trace` of `messages` + the assistant's `reply`, scored by the task."""
    import verifiers.v1 as vf

    kinds = {"system": vf.SystemMessage, "user": vf.UserMessage}
    msgs = [kinds[m["role"]](content=m["content"]) for m in messages]
    msgs.append(vf.AssistantMessage(content=reply))
    nodes = [vf.MessageNode(parent=i - 1 if i else None, message=m, sampled=i == len(msgs) - 1)
             for i, m in enumerate(msgs)]
    trace = vf.Trace(task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key,
                                       hash=task.hash),
                     agent=vf.AgentInfo(config=vf.AgentConfig()), nodes=nodes)
    asyncio.run(task.score(trace))
    return trace


class VerifiersEnv(TextEnv):
    """One verifiers task per episode, scored by its own rewards (see the module docstring)."""

    open_kwargs = True  # **taskset_args fill the taskset's own config (verifiers checks them)

    def __init__(self, taskset: str, *, reward_range: Any = None, success_at: float | None = None,
                 timeout: float = 60.0, max_turns: int = 1, max_invalid_actions: int = 3,
                 max_action_chars: int = 100_000, **taskset_args: Any):
        super().__init__(max_turns=max_turns, max_invalid_actions=max_invalid_actions,
                         max_action_chars=max_action_chars)
        self.taskset_id, self.taskset_args = taskset, dict(taskset_args)
        self.taskset = load_taskset(taskset, self.taskset_args)
        self._refuse_what_one_reply_cannot_run()
        self._tasks = list(self.taskset) if self.taskset.bounded else None
        if self._tasks == []:
            raise InvalidConfig(f"verifiers: taskset {taskset!r} yields no tasks")
        first = self._task_at(0)
        self.bounds = parse_range(reward_range) if reward_range is not None \
            else _weight_range(first)
        self.success_at = self.bounds[1] if success_at is None else float(success_at)
        self.timeout = float(timeout)
        self._task: Any = None
        self._opening: list[dict[str, str]] = []

    @classmethod
    def credit_support(cls, kwargs: dict[str, Any]) -> dict[str, str | None]:
        return credit_support({"outcome", "turn_rewards"}, "a verifiers: environment")

    def _refuse_what_one_reply_cannot_run(self) -> None:
        import verifiers.v1 as vf

        config = self.taskset.config
        if type(self.taskset).toolsets(config) or self.taskset.task_type().toolsets(config.task):
            raise InvalidConfig(f"verifiers: taskset {self.taskset_id!r} serves toolsets; "
                                "verifiers: imports tasksets answered in one reply (for tools, "
                                "serve them over MCP and use mcp:CMD_OR_URL)")
        env_class = vf.environment_class(self.taskset_id)
        if env_class is not vf.SingleAgentEnv:
            raise InvalidConfig(f"verifiers: taskset {self.taskset_id!r} runs its own "
                                f"{env_class.__name__}; only single-reply tasksets are imported")

    def _task_at(self, seed: int) -> Any:
        if self._tasks is not None:
            return self._tasks[seed % len(self._tasks)]
        return next(itertools.islice(iter(self.taskset), seed, None))

    # ---- TextEnv ----------------------------------------------------------------------------

    def _reset(self, seed: int, options: dict[str, Any]) -> tuple[list[dict], dict[str, Any]]:
        self._task = self._task_at(seed)
        data = self._task.data
        self.task_id = str(data.id or data.name or self._task.key[:16])
        opening = [system(data.system_prompt)] if data.system_prompt else []
        if isinstance(data.prompt, str):
            opening.append(user(data.prompt))
        else:
            opening += [{"role": m.role, "content": m.content if isinstance(m.content, str)
                         else str(m.content)} for m in data.prompt or []]
        self._opening = opening
        return list(opening), {}

    def _step(self, action: str) -> StepResult:
        trace = call_with_timeout(lambda: score_reply(self._task, self._opening, action),
                                  self.timeout, f"verifiers task {self.task_id!r} scoring")
        source = f"verifiers taskset {self.taskset_id!r}"
        parts = {}
        for name, reward in trace.rewards.items():
            if reward is None:
                raise ImportedEnvError(f"{source}: reward {name!r} was not scored")
            parts[name] = checked_reward(reward.value, (-float("inf"), float("inf")), source,
                                         f"reward {name!r}")
        total = checked_reward(sum(parts.values()), self.bounds, source)
        outcome = {"success": total >= self.success_at - 1e-9, "score": total,
                   **{f"metric_{k}": v for k, v in trace.metrics.items() if v is not None}}
        return StepResult([], parts, terminated=True, info={"outcome": outcome})

    def _state(self) -> Any:
        return {"task": self.task_id, "turn": self.turn}


def _weight_range(task: Any) -> tuple[float, float]:
    """[sum of negative weights, sum of positive weights]: scores taken in [0, 1]."""
    weights = [getattr(fn, "_vf_weight", 1.0) for fn in task.hooks("reward")]
    weights += [j.config.weight for j in task.plugged_judges()]
    if not weights:
        raise InvalidConfig("verifiers: the task declares no @vf.reward; nothing to train on")
    return (sum(min(0.0, w) for w in weights), sum(max(0.0, w) for w in weights))

"""An envgym environment as a verifiers (v1) environment: `load_environment(env_id, **kw)`.

Written with verifiers' own API, as one of its taskset packages: this module exports the
`Taskset` and `Env` subclasses through `__all__`, which is how verifiers' loader finds them.
verifiers 0.4 imports a taskset by a top-level module name (an installed package), so envgym
installs the package `envgym_export` (integrations/verifiers/envgym_export, re-exporting
this module) and verifiers' own CLIs find it by id:

    vf-eval envgym-export --env.taskset.env-id envgym/TimeSeries-v0 -m MODEL \
        --client.base-url http://127.0.0.1:8001/v1 --no-push

`load_environment` hands verifiers' own `load_environment` that id (aliasing this module
under it when the installed package is absent, as in a source tree on `sys.path`):

* `EnvgymTaskset` yields one task per seed (`first_seed`, `size`); a task's prompt is the
  environment's opening messages for that seed;
* `EnvgymEnv.run` plays the environment as the run's user: each assistant reply is a
  `step`, each observation the next user turn, until the episode ends;
* `EnvgymTask`'s reward replays the trace's assistant replies into a fresh environment at
  the task's seed (envgym environments are deterministic given the seed and the actions)
  and returns the environment's reward components, summed over turns, as keyed rewards.
  A reply-only harness (one turn) is scored the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.runtimes import SubprocessConfig

__all__ = ["EnvgymConfig", "EnvgymData", "EnvgymEnv", "EnvgymEnvConfig", "EnvgymTask",
           "EnvgymTaskset", "load_environment", "replay"]

TASKSET_ID = "envgym_export"


class EnvgymConfig(vf.TasksetConfig):
    env_id: str = ""
    """The envgym environment id (`envgym list`)."""
    env_kwargs: dict[str, Any] = {}
    """Keyword arguments for `envgym.make`."""
    first_seed: int = 0
    size: int = 64
    """Tasks are the seeds [first_seed, first_seed + size)."""


class EnvgymData(vf.TaskData):
    env_id: str
    env_kwargs: dict[str, Any] = {}
    seed: int


def replay(data: EnvgymData, replies: list[str]) -> tuple[dict[str, float], list[list[dict]], bool]:
    """Step a fresh environment at `data.seed` with `replies`: the reward components summed
    over turns, each turn's observation, and whether the episode ended."""
    from envgym.registration import make

    env = make(data.env_id, **data.env_kwargs)
    try:
        env.reset(seed=data.seed)
        totals: dict[str, float] = {}
        observations, done = [], False
        for reply in replies:
            obs, _, terminated, truncated, info = env.step(reply)
            for name, value in (info.get("reward_components") or {}).items():
                totals[name] = totals.get(name, 0.0) + float(value)
            observations.append(obs)
            if done := terminated or truncated:
                break
        return totals, observations, done
    finally:
        env.close()


class EnvgymTask(vf.Task[EnvgymData, vf.State, vf.TaskConfig]):
    @vf.reward(weight=1.0)
    async def envgym(self, trace: vf.Trace) -> dict[str, float]:
        replies = [_text(m.content) for m in trace.assistant_messages]
        totals, _, _ = replay(self.data, replies)
        return totals or {"envgym": 0.0}


class EnvgymTaskset(vf.Taskset[EnvgymTask, EnvgymConfig]):
    def load(self) -> Iterator[EnvgymTask]:
        from envgym.registration import make

        cfg = self.config
        if not cfg.env_id:
            raise ValueError("set --env.taskset.env-id (an envgym environment id)")
        env = make(cfg.env_id, **cfg.env_kwargs)
        try:
            for seed in range(cfg.first_seed, cfg.first_seed + cfg.size):
                obs, info = env.reset(seed=seed)
                system = "\n\n".join(m["content"] for m in obs if m["role"] == "system")
                prompt = [vf.UserMessage(content=_render(m)) for m in obs if m["role"] != "system"]
                yield EnvgymTask(EnvgymData(
                    id=f"{cfg.env_id}/{seed}", name=str(info.get("task_id")), seed=seed,
                    env_id=cfg.env_id, env_kwargs=dict(cfg.env_kwargs),
                    system_prompt=system or None, prompt=prompt), cfg.task)
        finally:
            env.close()


class EnvgymEnvConfig(vf.EnvConfig):
    # The player's default harness is verifiers' `null` (plain chat turns: nothing runs but
    # the model call) in a local subprocess, not the `bash` shell verifiers gives a taskset
    # without a harness of its own; `--env.player.harness.id` / `.runtime.type` override it.
    player: vf.AgentConfig = vf.AgentConfig(harness=vf.HarnessConfig(id="null"),
                                            runtime=SubprocessConfig())


class EnvgymEnv(vf.Env[EnvgymEnvConfig]):
    """The environment answers every reply with its observation until the episode ends."""

    async def run(self, task: EnvgymTask, agents: vf.Agents) -> None:
        replies: list[str] = []
        async with agents.player.interaction(task) as interaction:
            segment = await interaction.turn()
            while not segment.terminated:
                replies.append(segment.last_reply or "")
                _, observations, done = replay(task.data, replies)
                if done or not observations[-1]:
                    break
                segment = await interaction.turn("\n\n".join(_render(m) for m in observations[-1]))


def load_environment(env_id: str, **env_kwargs: Any) -> EnvgymEnv:
    """`env_id` as a verifiers environment; `first_seed=` and `size=` pick its tasks,
    `harness=` the player's verifiers harness (default `null`: plain chat turns); the other
    keyword arguments go to `envgym.make`."""
    import importlib.util
    import sys

    if importlib.util.find_spec(TASKSET_ID) is None:
        sys.modules.setdefault(TASKSET_ID, sys.modules[__name__])
    first_seed = int(env_kwargs.pop("first_seed", 0))
    size = int(env_kwargs.pop("size", 64))
    harness = env_kwargs.pop("harness", "null")  # a chat turn per step: no shell, no files
    taskset = {"id": TASKSET_ID, "env_id": env_id, "env_kwargs": env_kwargs,
               "first_seed": first_seed, "size": size}
    config = vf.env_config_type(TASKSET_ID).model_validate(
        {"taskset": taskset, "player": {"harness": {"id": harness}}})
    return vf.load_environment(config)


def _render(message: dict[str, Any]) -> str:
    """A non-chat role (tool output, a continuation) is shown to the model as text."""
    role, content = message.get("role"), message.get("content", "")
    return content if role == "user" else f"[{role}] {content}"


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, default=str)

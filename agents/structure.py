"""The rollout structures `envgym train` builds for methods that need more than G flat
samples per task (DESIGN "Training structure"), and the run-level state they share.

The trainer calls four functions, one line each:

* `structured_rollout(...)` — instead of the flat `collect` when the method needs structure:
  * a multi-agent environment (ILR's Debate-v0, any `MultiAgentTextEnv`) runs through
    `collect_multi`. Agents named in the env config's `agents` table play the fixed policy
    given there (`trainable=False`, no gradient); every other agent plays the learner's
    policy. Groups are per (task, agent): `group_id = "<env>/<seed>/<agent>"`, with
    `meta["task_group"]` naming the question and `meta["episode_id"]` the debate;
  * the `hierarchical` chain (ARTIST) runs `envgym.hierarchy.collect_hierarchical`:
    `group_size` controller rollouts per question, each forked into
    `rollout.reasoner_samples` reasoner samples.
  Both hand the run's `RunState` to every environment (`envgym.runstate`).
* `update_run_state(run, trajs)` — after the step's rollouts, environments learn run-level
  state (IRT abilities, reward histories) from the finished trajectories.
* `drop_fixed_agents(credit)` — after credit, trajectories of `trainable=False` agents leave
  the batch (they were needed until then: a partner's reward feeds `calibrated`).
* `role_token_mask(...)` — per-token 0/1 for the turns of some roles (ARTIST's KL on
  reasoner tokens only).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from envgym.runstate import RunState, env_factory, update_from
from envgym.trajectory import Trajectory

__all__ = ["drop_fixed_agents", "env_kwargs", "is_multi_agent", "role_token_mask", "structured_rollout",
           "update_run_state", "warm_start_policy"]


def env_kwargs(env: Any, cfg: Any) -> dict[str, Any]:
    """The environment's constructor kwargs: its config `kwargs`, plus `rollout.max_turns`
    when the constructor takes a `max_turns` (not every environment does: a debate has
    phases, a consultation its own turn budget; the engine still stops at max_turns)."""
    import inspect

    from envgym.runstate import env_class

    kwargs = dict(env.kwargs)
    try:
        params = inspect.signature(env_class(env.id)).parameters
    except (TypeError, ValueError):
        params = {}
    if "max_turns" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        kwargs.setdefault("max_turns", cfg.rollout.max_turns)
    return kwargs


def is_multi_agent(env_id: str) -> bool:
    from envgym.registration import spec
    return spec(env_id).multi_agent


def structured_rollout(policy: Any, env: Any, first_seed: int, n_tasks: int, group_size: int,
                       cfg: Any, sampling: Any, run: RunState | None) -> list[Trajectory] | None:
    """The structured rollouts of this step for `env` (an `EnvConfig`), or None when the
    flat `collect` is what the method wants."""
    kwargs = env_kwargs(env, cfg)
    engine = {"concurrency": 1} if cfg.rollout.deterministic else {}
    if is_multi_agent(env.id):
        return collect_agents(policy, env, kwargs, first_seed, n_tasks, group_size, sampling,
                              run, engine)
    if "hierarchical" in cfg.credit and group_size > 1:
        from envgym.hierarchy import collect_hierarchical
        return collect_hierarchical(env.id, policy, episodes=n_tasks, controllers=group_size,
                                    samples=cfg.rollout.reasoner_samples, seed=first_seed,
                                    env_kwargs=kwargs, sampling=sampling, run=run,
                                    controller_temperature=cfg.rollout.controller_temperature,
                                    reasoner_temperature=cfg.rollout.reasoner_temperature,
                                    **engine)
    return None


def collect_agents(policy: Any, env: Any, kwargs: dict[str, Any], first_seed: int,
                   n_tasks: int, group_size: int, sampling: Any, run: RunState | None,
                   engine: dict[str, Any]) -> list[Trajectory]:
    """Multi-agent episodes: fixed agents from `env.agents`, the learner for the rest
    (`policy` a dict `{agent: policy}`: each agent's own learner, `TrainConfig.agents`)."""
    from envgym.rollout import collect_multi

    fixed = dict(env.agents)
    max_turns = kwargs.pop("max_turns", None)  # the engine's limit, if the env took none
    if fixed:
        kwargs = {**kwargs, "trainable": {a: False for a in fixed}}
    own = dict(policy) if isinstance(policy, dict) else {"*": policy}  # [agents.ID]: per agent
    trajs = collect_multi(env_factory(env.id, kwargs, run or RunState()), {**own, **fixed},
                          episodes=n_tasks, group_size=group_size, seed=first_seed,
                          max_turns=max_turns, sampling=sampling, **engine)
    for t in trajs:
        t.meta.update(task_group=t.group_id, episode_id=t.meta.get("member", 0),
                      trainable=t.agent_id not in fixed)
        t.group_id = f"{t.group_id}/{t.agent_id}"
    return trajs


def update_run_state(run: RunState, trajs: list[Trajectory]) -> None:
    """Each environment's class learns from its own finished trajectories, in batch order.
    Under torchrun every rank learns from every rank's episodes (gathered in rank order), so
    the run state stays identical across ranks and rank 0's checkpoint resumes all of them."""
    by_env: dict[str, list[Trajectory]] = defaultdict(list)
    for t in _gathered(trajs):
        by_env[t.env_id].append(t)
    for env_id, group in by_env.items():
        update_from(run, env_id, group)


def _gathered(trajs: list[Trajectory]) -> list[Trajectory]:
    """All ranks' trajectories, slimmed to what `update_run` reads (no tokens)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return trajs
    slim = [(t.env_id, t.agent_id, t.group_id, dict(t.meta), t.total_reward, t.error)
            for t in trajs]
    parts: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(parts, slim)
    from envgym.trajectory import Turn
    return [Trajectory(env_id=e, agent_id=a, group_id=g, meta=m, error=err,
                       turns=[Turn(action="", reward=r)]) for part in parts for e, a, g, m, r, err in part]


def drop_fixed_agents(credit: Any) -> Any:
    """The credit batch without the trajectories of `trainable=False` agents."""
    keep = [i for i, t in enumerate(credit.trajectories) if t.meta.get("trainable", True)]
    if len(keep) == len(credit.trajectories):
        return credit
    credit.stats["multiagent/fixed_trajectories"] = float(len(credit.trajectories) - len(keep))
    return credit.subset(keep)


def role_token_mask(trajs: list[Trajectory], roles: list[str]) -> list[list[np.ndarray]]:
    """Per action token: 1.0 on turns whose `role` is in `roles`, else 0.0 (in the layout of
    `CreditBatch.advantages`, so `build_batch` aligns it with the tokens)."""
    return [[np.full(len(tt.action_token_ids), float(tt.role in roles)) for tt in t.turns]
            for t in trajs]


def task_pool_size(env_id: str, kwargs: dict[str, Any]) -> int | None:
    """How many distinct tasks `env_id` cycles through (seed mod N), from the environment
    class's optional `task_pool_size(kwargs)` classmethod; None for an unbounded generator,
    an environment that does not say, or one that cannot be looked up here."""
    try:
        from envgym.runstate import env_class
        size = getattr(env_class(env_id), "task_pool_size", None)
    except Exception:  # noqa: BLE001 - an unknown id fails later, when it is made
        return None
    return size(dict(kwargs)) if callable(size) else None


def shared_tasks(train: tuple[int, int], evaluation: tuple[int, int], pool: int) -> int:
    """How many of a `pool`-task cycle both seed ranges reach."""
    def reached(lo: int, hi: int) -> set[int]:
        return set(range(pool)) if hi - lo >= pool else {s % pool for s in range(lo, hi)}
    return len(reached(*train) & reached(*evaluation))


def warm_start_policy(cfg: Any) -> str | None:
    """`model.warm_start = "sft"`: run `envgym sft` on this config (reused from
    `output_dir/sft` while its settings match) and return the path to train from; None
    without a warm start."""
    if cfg.model.warm_start != "sft":
        return None
    from envgym.agents.sft import warm_start

    return warm_start(cfg)  # rebuilt when its settings changed

"""Evaluation: run a policy on an environment and aggregate what happened.

`evaluate` runs `episodes` tasks with `samples` attempts each (the same env seed within a
task, different policy seeds) and reports mean reward, success rate, mean turns, the unbiased
pass@k of Chen et al. (2021) over the samples of each task, and the environment's own
aggregates (`Env.summarize`). Episodes are produced by `run_episodes`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from envgym.registration import load_entry_point, make, spec
from envgym.trajectory import Trajectory

__all__ = ["aggregate", "evaluate", "pass_at_k", "run_episodes"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples of which c are correct: 1 - C(n-c, k) / C(n, k)."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per task, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def aggregate(env_id: str, policy: str, trajectories: list[Trajectory], k: int = 1) -> dict[str, Any]:
    """The metrics object `envgym eval --json` prints."""
    by_task: dict[Any, list[Trajectory]] = defaultdict(list)
    for t in trajectories:
        by_task[(t.task_id, t.seed)].append(t)
    samples = min(len(v) for v in by_task.values()) if by_task else 0
    outcomes = [t.outcome for t in trajectories if t.outcome]
    metrics = _summarizer(env_id)(outcomes) if outcomes else {}
    result = {
        "env": env_id,
        "policy": policy,
        "episodes": len(by_task),
        "samples_per_task": samples,
        "mean_reward": _mean([t.total_reward for t in trajectories]),
        "reward_ci95": _ci95([t.total_reward for t in trajectories]),
        "success_rate": _mean([float(t.success) for t in trajectories]),
        "mean_turns": _mean([len(t.turns) for t in trajectories]),
        "errors": sum(t.error is not None for t in trajectories),
        "metrics": metrics,
    }
    for kk in sorted({1, k}):
        if kk <= samples:
            result[f"pass@{kk}"] = _mean([pass_at_k(len(v), sum(t.success for t in v), kk)
                                          for v in by_task.values()])
    return result


def evaluate(env_id: str, policy: str, *, episodes: int, k: int = 1, samples: int | None = None,
             seed: int = 0, env_kwargs: dict[str, Any] | None = None, out: str | None = None,
             progress: bool = False) -> dict[str, Any]:
    """Run and aggregate; `samples` attempts per task (default k)."""
    trajectories = run_episodes(env_id, policy, episodes=episodes, group_size=samples or k,
                                seed=seed, env_kwargs=env_kwargs, out=out, progress=progress)
    return aggregate(env_id, policy, trajectories, k)


def run_episodes(env_id: str, policy: Any, *, episodes: int, group_size: int = 1, seed: int = 0,
                 env_kwargs: dict[str, Any] | None = None, out: str | None = None,
                 progress: bool = False) -> list[Trajectory]:
    """Episodes of `policy` on `env_id` through the rollout engine; trajectories stream to `out`.

    `policy` is a spec string (`hf:`, `openai:`, `vllm:`, `scripted:`), a loaded policy, or
    for a multi-agent environment a dict `{agent: spec}` (`"*"` for every other agent).
    """
    from envgym.rollout import collect, collect_multi

    options = dict(episodes=episodes, group_size=group_size, seed=seed, env_kwargs=env_kwargs,
                   writer=out, progress=progress)
    if spec(env_id).multi_agent:
        policies = policy if isinstance(policy, dict) else {"*": policy}
        return collect_multi(env_id, policies, **options)
    if isinstance(policy, dict):
        raise ValueError(f"{env_id} is single-agent: pass one --policy SPEC")
    return collect(env_id, policy, **options)


def _summarizer(env_id: str):
    """The environment class's `summarize`, without building an environment when the entry
    point is the class itself (some load models or indexes on construction)."""
    target = load_entry_point(spec(env_id).entry_point)
    if isinstance(target, type) and hasattr(target, "summarize"):
        return target.summarize
    return type(make(env_id)).summarize


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else 0.0


def _ci95(values: list[float]) -> float:
    """Half-width of a normal-approximation 95% confidence interval of the mean."""
    if len(values) < 2:
        return 0.0
    return float(1.96 * np.std(values, ddof=1) / math.sqrt(len(values)))

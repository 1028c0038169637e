"""Evaluation: run a policy on an environment and aggregate what happened.

`evaluate` runs `episodes` tasks with `samples` attempts each (the same env seed within a
task, different policy seeds) and reports mean reward, success rate, mean turns, the unbiased
pass@k of Chen et al. (2021) over the samples of each task, and the environment's own
aggregates (`Env.summarize`). Episodes are produced by `run_episodes`.

Policies are ranked on the task reward. Reward components an environment declares as
training-time shaping (`shaping_components`, e.g. TimeSeries-v0's decaying exploration
bonus) are left out of `mean_reward` and reported apart as `shaping_reward`; `train_reward`
is the sum the trainer optimised (`mean_reward + shaping_reward`). Every line envgym prints
uses these names, never a bare "mean reward": the progress line of a rollout reports
`train_reward` (it sees returns before shaping is known), the summaries `mean_reward` beside
it (`reward_line`).

Failures are not scores. An episode that ended in an exception or timeout (a dead policy
server, a crashed sandbox: `Trajectory.error`) says nothing about the policy, so every metric
is computed over *completed* episodes only; failed ones are counted apart under `failures`,
with their reasons grouped, and `error_rate` is their share. `envgym eval` exits non-zero
when `error_rate` exceeds `--max-error-rate` (default `MAX_ERROR_RATE`): a comparison
between policies is not trustworthy when a tenth of its episodes never ran.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from envgym.registration import load_entry_point, make, spec
from envgym.trajectory import Trajectory

__all__ = ["MAX_ERROR_RATE", "aggregate", "evaluate", "failure_reasons", "pass_at_k",
           "reward_line", "run_episodes", "shaping_components", "shaping_return"]

MAX_ERROR_RATE = 0.1
"""Default share of failed episodes above which `envgym eval` exits non-zero."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples of which c are correct: 1 - C(n-c, k) / C(n, k)."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per task, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def aggregate(env_id: str, policy: str, trajectories: list[Trajectory], k: int = 1) -> dict[str, Any]:
    """The metrics object `envgym eval --json` prints: metrics over completed episodes only,
    failed episodes counted apart (`failures`, `error_rate`)."""
    done = [t for t in trajectories if t.error is None]
    failed = [t for t in trajectories if t.error is not None]
    by_task: dict[Any, list[Trajectory]] = defaultdict(list)
    for t in done:
        by_task[(t.task_id, t.seed)].append(t)
    samples = min(len(v) for v in by_task.values()) if by_task else 0
    outcomes = [t.outcome for t in done if t.outcome]
    metrics = _summarizer(env_id)(outcomes) if outcomes else {}
    shaping = shaping_components(env_id)
    shaped = [shaping_return(t, shaping) for t in done]
    rewards = [t.total_reward - s for t, s in zip(done, shaped)]
    result = {
        "env": env_id,
        "policy": policy,
        "episodes": len({t.seed for t in trajectories}),
        "completed": len(done),
        "samples_per_task": samples,
        "mean_reward": _mean(rewards),
        "reward_ci95": _ci95(rewards),
        "shaping_reward": _mean(shaped),
        "train_reward": _mean([t.total_reward for t in done]),
        "success_rate": _mean([float(t.success) for t in done]),
        "mean_turns": _mean([len(t.turns) for t in done]),
        "errors": len(failed),
        "error_rate": len(failed) / len(trajectories) if trajectories else 0.0,
        "failures": failure_reasons(failed),
        "metrics": metrics,
    }
    if not done:  # nothing completed: there is no reward to report, only failures
        for key in ("mean_reward", "reward_ci95", "shaping_reward", "train_reward",
                    "success_rate", "mean_turns"):
            result[key] = None
    for kk in sorted({1, k}):
        if by_task and kk <= samples:
            result[f"pass@{kk}"] = _mean([pass_at_k(len(v), sum(t.success for t in v), kk)
                                          for v in by_task.values()])
    return result


def reward_line(summary: dict[str, Any]) -> str:
    """`mean_reward X (task reward)`, with `train_reward Y (shaping included)` when shaping
    paid anything: the names of `aggregate`'s JSON, so no two lines call different numbers
    the same thing."""
    line = f"mean_reward {summary['mean_reward']:.3f} (task reward)"
    if summary.get("shaping_reward"):
        line += f", train_reward {summary['train_reward']:.3f} (shaping included)"
    return line


def failure_reasons(failed: list[Trajectory], limit: int = 10) -> dict[str, int]:
    """Failed episodes grouped by reason (the error's first line), most common first."""
    counts: Counter[str] = Counter()
    for t in failed:
        counts[_reason(t.error or "")] += 1
    top = dict(counts.most_common(limit))
    rest = sum(counts.values()) - sum(top.values())
    return top | ({"(other reasons)": rest} if rest else {})


def _reason(error: str) -> str:
    first = error.strip().splitlines()[0] if error.strip() else "unknown error"
    return first[:300]


def evaluate(env_id: str, policy: str, *, episodes: int, k: int = 1, samples: int | None = None,
             seed: int = 0, env_kwargs: dict[str, Any] | None = None, out: str | None = None,
             progress: bool = False, workers: int = 0, run: Any = None,
             sampling: Any = None) -> dict[str, Any]:
    """Run and aggregate; `samples` attempts per task (default k); `sampling` (a
    `SamplingParams`) overrides the engine's temperature / max_tokens."""
    trajectories = run_episodes(env_id, policy, episodes=episodes, group_size=samples or k,
                                seed=seed, env_kwargs=env_kwargs, out=out, progress=progress,
                                workers=workers, run=run, sampling=sampling)
    return aggregate(env_id, policy, trajectories, k)


def run_episodes(env_id: str, policy: Any, *, episodes: int, group_size: int = 1, seed: int = 0,
                 env_kwargs: dict[str, Any] | None = None, out: str | None = None,
                 progress: bool = False, workers: int = 0, run: Any = None,
                 sampling: Any = None) -> list[Trajectory]:
    """Episodes of `policy` on `env_id` through the rollout engine; trajectories stream to `out`.

    `policy` is a spec string (`hf:`, `openai:`, `vllm:`, `scripted:`), a loaded policy, or
    for a multi-agent environment a dict `{agent: spec}` (`"*"` for every other agent).
    `workers >= 1` runs the environments in that many Ray actors (`envgym[ray]`).
    `run` (a `RunState`, e.g. a training run's, see `agents/run_state.py`) binds every
    environment to it, read-only, so run-level state (Debate-v0's IRT) is the run's.
    """
    from envgym.rollout import collect, collect_multi

    options = dict(episodes=episodes, group_size=group_size, seed=seed, env_kwargs=env_kwargs,
                   writer=out, progress=progress, sampling=sampling)
    multi = spec(env_id).multi_agent
    if not multi and isinstance(policy, dict):
        raise ValueError(f"{env_id} is single-agent: pass one --policy SPEC")
    if multi and not isinstance(policy, dict):
        policy = {"*": policy}
    target: Any = env_id
    if run is not None:
        if workers:
            raise ValueError("a run's state cannot be shared with Ray workers; use workers=0")
        from envgym.runstate import env_factory

        target = env_factory(env_id, env_kwargs or {}, run)
    if workers:
        from envgym.integrations.ray import pooled

        target, policy = pooled(env_id, policy, workers, env_kwargs)
    try:
        return (collect_multi if multi else collect)(target, policy, **options)
    finally:
        if workers:
            target.shutdown()


def shaping_components(env_id: str) -> tuple[str, ...]:
    """The reward components `env_id`'s class declares as training-time shaping."""
    target = load_entry_point(spec(env_id).entry_point)
    if not isinstance(target, type):
        target = type(make(env_id))
    return tuple(getattr(target, "shaping_components", ()))


def shaping_return(trajectory: Trajectory, shaping: tuple[str, ...]) -> float:
    """The part of a trajectory's return paid by the `shaping` components."""
    return sum(t.reward_components.get(k, 0.0) for t in trajectory.turns for k in shaping)


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

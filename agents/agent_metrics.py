"""Metrics per agent of a multi-agent run: the learner's numbers never average in a partner.

In a debate with a fixed scripted partner (`trainable=False`), a mean over every trajectory
reports the partner's reward as if it were learnt: a learner at -0.3 beside a partner at 0.7
logged 0.2. So the trainer's `reward`/`success` (and held-out `eval/ENV/reward`) are over
trainable trajectories only, each trainable agent gets `agent/ID/...`, and each fixed one is
reported apart under `fixed/ID/...`. Single-agent trajectories (`agent_id` None) add nothing.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

__all__ = ["agent_metrics", "is_trainable", "trainable", "varying_groups"]


def is_trainable(traj: Any) -> bool:
    return bool(traj.meta.get("trainable", True))


def trainable(trajs: list[Any]) -> list[Any]:
    """The trajectories that get a gradient; all of them when none is marked trainable (so a
    run whose every seat is fixed still reports something rather than NaN)."""
    kept = [t for t in trajs if is_trainable(t)]
    return kept or list(trajs)


def agent_metrics(trajs: list[Any], prefix: str = "") -> dict[str, float]:
    """`{prefix}agent/ID/return|success|n|varying_groups` per trainable agent,
    `{prefix}fixed/ID/...` per fixed one (failed trajectories excluded: a failure is not a
    score). Each agent of a run with `[agents.ID]` learners is one of the trainable ones."""
    by_agent: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for t in trajs:
        if t.agent_id is not None and t.error is None:
            kind = "agent" if is_trainable(t) else "fixed"
            by_agent[(kind, str(t.agent_id))].append(t)
    out: dict[str, float] = {}
    for (kind, agent), ts in sorted(by_agent.items()):
        key = f"{prefix}{kind}/{agent}"
        out[f"{key}/return"] = float(np.mean([t.total_reward for t in ts]))
        out[f"{key}/success"] = float(np.mean([t.success for t in ts]))
        out[f"{key}/n"] = float(len(ts))
        if (varying := varying_groups(ts)) is not None:
            out[f"{key}/varying_groups"] = varying
    return out


def varying_groups(trajs: list[Any]) -> float | None:
    """The fraction of groups (`group_id`, one per (task, agent)) of two or more trajectories
    whose own returns are not all equal; None without such a group (evaluation's one
    rollout per task). A group whose returns are equal gets no advantage from its own
    reward: under `calibrated` all its signal would be the partner's term."""
    groups: dict[str, list[float]] = defaultdict(list)
    for t in trajs:
        groups[str(t.group_id)].append(t.total_reward)
    sized = [r for r in groups.values() if len(r) > 1]
    if not sized:
        return None
    return float(np.mean([max(r) - min(r) > 1e-9 for r in sized]))

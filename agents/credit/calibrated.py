"""ILR's perception calibration: an agent's reward takes in its partner's reward statistics.

The paper does not publish the calibration formula (methods.md §7.2); this form is ours.
What it reads, all written by the engine from the environment (`Debate-v0`'s
`trajectory_meta`) and by `envgym train` (one group per (task, agent)):

* `meta["mode"]` — the episode's mode; a trajectory without it is refused, never given the
  cooperative sign by default;
* `meta["task_group"]` — the question the agents' groups belong to, and
  `meta["episode_id"]` — which debate of that question. Both are required: guessing them
  from `group_id` (one per agent) would pair nobody and silently calibrate nothing;
* `meta["reward_history"][agent]` — `{"mean", "std", "n"}` of that agent's returns over the
  run's recent episodes (previous steps), the partner's reward distribution.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from envgym.agents.credit.base import CreditBatch, group_indices
from envgym.trajectory import Trajectory

MODES = {"cooperative": 1.0, "competitive": -1.0}


REQUIRED_META = ("mode", "task_group", "episode_id")


def _episode_key(traj: Trajectory, rank: int) -> str:
    return str(traj.meta["episode_id"])


def _task_key(traj: Trajectory) -> str:
    return str(traj.meta["task_group"])


def calibrated(batch: CreditBatch, *, beta: float = 0.5, eps: float = 1e-6, clip: float = 3.0,
               stats: str = "history", min_history: int = 2) -> CreditBatch:
    """r~_{a,e} = r_{a,e} + s_e * beta * clip(mean_{b != a} (r_{b,e} - mu_b) / (sigma_b + eps), ±clip).

    Per question, agent a's return in episode e is shifted by how much better than usual its
    partners did in the same episode. mu_b, sigma_b describe partner b's reward distribution:
    with `stats="history"` (default) the run's history of b's returns
    (`meta["reward_history"][b]`, previous steps) once it holds `min_history` episodes, else
    — and with `stats="group"` — b's returns over this question's episodes (population std).
    s_e = +1 for cooperative episodes, -1 for competitive ones (`meta["mode"]`): a
    cooperating agent shares its partner's success, a competing one pays for it. A reward
    stage: put it before a base estimator, e.g. `["calibrated", "grpo"]`.
    """
    if stats not in ("history", "group"):
        raise ValueError(f"credit `calibrated`: stats must be 'history' or 'group', not {stats!r}")
    trajs, new = batch.trajectories, batch.returns.copy()
    for i, t in enumerate(trajs):
        missing = [k for k in REQUIRED_META if k not in t.meta]
        if missing:
            raise ValueError(f"credit `calibrated`: trajectory {i} ({t.group_id}) lacks meta "
                             f"{missing}; multi-agent episodes get them from the engine and "
                             "`envgym train` (agents.structure.collect_agents)")
        if t.error is None and t.meta.get("mode") not in MODES:
            raise ValueError(f"credit `calibrated`: trajectory {i} ({t.group_id}) has meta mode "
                             f"{t.meta.get('mode')!r}; the environment must record the "
                             f"episode's mode, one of {sorted(MODES)}")
    used_history = 0
    for idx in group_indices(trajs, key=_task_key).values():
        by_agent: dict[str, dict[str, int]] = defaultdict(dict)
        for i in idx:
            agent = str(trajs[i].agent_id)
            by_agent[agent][_episode_key(trajs[i], len(by_agent[agent]))] = i
        if len(by_agent) < 2:
            continue
        z = {}
        for agent, episodes in by_agent.items():
            r = np.array([batch.returns[i] for i in episodes.values()])
            mu, sigma, hist = r.mean(), r.std(), False
            if stats == "history":
                mu, sigma, hist = _history(trajs, episodes.values(), agent, min_history, mu, sigma)
            used_history += hist
            for e, v in zip(episodes, (r - mu) / (sigma + eps)):
                z[(agent, e)] = v
        for agent, episodes in by_agent.items():
            for e, i in episodes.items():
                partners = [z[(b, e)] for b in by_agent if b != agent and (b, e) in z]
                if partners and trajs[i].error is None:
                    sign = MODES[trajs[i].meta["mode"]]
                    new[i] = batch.returns[i] + sign * beta * float(
                        np.clip(np.mean(partners), -clip, clip))
    batch.stats["calibrated/shift_abs_mean"] = float(np.abs(new - batch.returns).mean()) if len(new) else 0.0
    batch.stats["calibrated/history_agents"] = float(used_history)
    batch.returns = new
    return batch


def _history(trajs, members, agent, min_history, mu, sigma) -> tuple[float, float, bool]:
    """Agent's (mean, std) from the run's reward history in its trajectories' meta, if long
    enough; else the group's (mu, sigma)."""
    for i in members:
        h = (trajs[i].meta.get("reward_history") or {}).get(agent)
        if h and h.get("n", 0) >= min_history:
            return float(h["mean"]), float(h["std"]), True
    return mu, sigma, False

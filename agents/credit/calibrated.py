"""ILR's perception calibration: an agent's reward takes in its partner's reward statistics.

The paper does not publish the calibration formula (methods.md §7.2); this form is ours.
What it reads, all written by the engine from the environment (`Debate-v0`'s
`trajectory_meta`) and by `envgym train` (one group per (task, agent)):

* `meta["task_group"]` — the question the agents' groups belong to, and
  `meta["episode_id"]` — which debate of that question. Both are required: guessing them
  from `group_id` (one per agent) would pair nobody and silently calibrate nothing;
* `meta["reward_history"][agent]` — `{"mean", "std", "n"}` of that agent's returns over the
  run's recent episodes (previous steps), the partner's reward distribution.

The partner term has the same sign in every mode. A competitive sign (a competitor paying for
its partner's unusual success) pays an agent for its partner's failure, so an agent that can
mislead a partner who reads it gains by lying (Debate-v0's `hack_deceive_partner`); with one
sign, dragging a partner down always costs and helping it always pays.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from envgym.agents.credit.base import CreditBatch, group_indices
from envgym.trajectory import Trajectory

REQUIRED_META = ("task_group", "episode_id")


def _episode_key(traj: Trajectory, rank: int) -> str:
    return str(traj.meta["episode_id"])


def _task_key(traj: Trajectory) -> str:
    return str(traj.meta["task_group"])


def calibrated(batch: CreditBatch, *, beta: float = 0.5, min_std: float = 0.5,
               clip: float = 3.0, stats: str = "history", min_history: int = 2) -> CreditBatch:
    """r~_{a,e} = r_{a,e} + beta * clip(mean_{b != a} z_{b,e}, ±clip), with
    z_{b,e} = (r_{b,e} - mu_b) / max(sigma_b, min_std).

    Per question, agent a's return in episode e is shifted by how much better than usual its
    partners did in the same episode. mu_b, sigma_b describe partner b's reward distribution:
    with `stats="history"` (default) the run's history of b's returns
    (`meta["reward_history"][b]`, previous steps) once it holds `min_history` episodes, else
    — and with `stats="group"` — b's returns over this question's episodes (population std).
    The sign is + in every mode (see the module docstring). `min_std` floors sigma_b: a
    partner whose history has no spread (sigma_b = 0, say a fixed partner that always scores
    the same) would otherwise turn a 0.1 change in its return into the whole clip,
    beta * clip = 1.5, more than the task's `correct` reward. With the floor the shift moves by
    at most beta * |delta r_b| / min_std (0.1 for a 0.1 change at the defaults). A reward
    stage: put it before a base estimator, e.g. `["calibrated", "grpo"]`.
    """
    if min_std <= 0:
        raise ValueError(f"credit `calibrated`: min_std must be > 0, not {min_std!r}")
    if stats not in ("history", "group"):
        raise ValueError(f"credit `calibrated`: stats must be 'history' or 'group', not {stats!r}")
    trajs, new = batch.trajectories, batch.returns.copy()
    for i, t in enumerate(trajs):
        missing = [k for k in REQUIRED_META if k not in t.meta]
        if missing:
            raise ValueError(f"credit `calibrated`: trajectory {i} ({t.group_id}) lacks meta "
                             f"{missing}; multi-agent episodes get them from the engine and "
                             "`envgym train` (agents.structure.collect_agents)")
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
            for e, v in zip(episodes, (r - mu) / max(sigma, min_std)):
                z[(agent, e)] = v
        for agent, episodes in by_agent.items():
            for e, i in episodes.items():
                partners = [z[(b, e)] for b in by_agent if b != agent and (b, e) in z]
                if partners and trajs[i].error is None:
                    new[i] = batch.returns[i] + beta * float(
                        np.clip(np.mean(partners), -clip, clip))
    shift = np.abs(new - batch.returns)
    batch.stats["calibrated/shift_abs_mean"] = float(shift.mean()) if len(new) else 0.0
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

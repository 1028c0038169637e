"""ILR's perception calibration: an agent's reward takes in its partner's reward statistics.

The paper does not publish the calibration formula (methods.md §7.2); this form is ours.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from envgym.agents.credit.base import CreditBatch, group_indices
from envgym.trajectory import Trajectory


def _episode_key(traj: Trajectory, rank: int) -> str:
    """Which debate episode a trajectory belongs to: `meta["episode_id"]`, else its rank
    among its agent's trajectories in the group (the engine writes agents in lockstep)."""
    return str(traj.meta.get("episode_id", rank))


def calibrated(batch: CreditBatch, *, beta: float = 0.5, eps: float = 1e-6,
               clip: float = 3.0) -> CreditBatch:
    """r~_{a,e} = r_{a,e} + s_e * beta * clip(mean_{b != a} (r_{b,e} - mu_b) / (sigma_b + eps), ±clip).

    Within a group (one question), agent a's return in episode e is shifted by how much better
    than usual its partners did in the same episode, mu_b and sigma_b (population std) being
    partner b's reward mean and std over the group's episodes. s_e = +1 for cooperative
    episodes and -1 for competitive ones (`meta["mode"]`, default cooperative): a cooperating
    agent shares its partner's success, a competing one pays for it. This is a reward stage:
    put it before a base estimator, e.g. `["calibrated", "grpo"]`. It is the debate
    environment's `calibration.calibrated_reward(mode="advantage")` computed over the group.
    """
    trajs, new = batch.trajectories, batch.returns.copy()
    for idx in group_indices(trajs).values():
        by_agent: dict[str, dict[str, int]] = defaultdict(dict)
        for i in idx:
            agent = str(trajs[i].agent_id)
            by_agent[agent][_episode_key(trajs[i], len(by_agent[agent]))] = i
        if len(by_agent) < 2:
            continue
        z = {}
        for agent, eps_map in by_agent.items():
            r = np.array([batch.returns[i] for i in eps_map.values()])
            for (e, _i), v in zip(eps_map.items(), (r - r.mean()) / (r.std() + eps)):
                z[(agent, e)] = v
        for agent, eps_map in by_agent.items():
            for e, i in eps_map.items():
                partners = [z[(b, e)] for b in by_agent if b != agent and (b, e) in z]
                sign = -1.0 if trajs[i].meta.get("mode") == "competitive" else 1.0
                if partners:
                    new[i] = batch.returns[i] + sign * beta * float(np.clip(np.mean(partners), -clip, clip))
    batch.stats["calibrated/shift_abs_mean"] = float(np.abs(new - batch.returns).mean()) if len(new) else 0.0
    batch.returns = new
    return batch

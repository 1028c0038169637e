"""SLATE: step-level advantages over k sibling continuations branched from one prefix."""

from __future__ import annotations

import numpy as np

from envgym.agents.credit.base import CreditBatch, group_indices, zscore
from envgym.trajectory import Trajectory


def branch_key(traj: Trajectory) -> str:
    """Siblings share `meta["branch_id"]` (set by the engine's `branch`), else the group."""
    return str(traj.meta.get("branch_id", traj.group_id if traj.group_id is not None
                             else traj.task_id))


def slate(batch: CreditBatch, *, std_norm: bool = True, eps: float = 1e-6) -> CreditBatch:
    """A_j = (r_j - mean_k r) / (std_k r + eps) for the k siblings of one branch point (Eq. 5).

    The siblings come from `envgym.tree.slate_trees` (SLATE's Algorithm 1): one set per step
    of each tree, `meta["branch_id"]` naming it. `std_norm=False` keeps r_j - mean_k r (to
    compare estimator variances with Dr. GRPO's unnormalised advantages).

    Each sibling is a trajectory whose last turn is the candidate and whose earlier turns are
    the shared prefix; r_j is the candidate turn's reward (the dense step reward, e.g. the
    judge's), std is unbiased (torch.std, as SLATE's code). Only the candidate turn is trained:
    prefix turns are masked, since the prefix is shared and was not sampled here. The trainer
    is asked for `seq_mean` aggregation, so each candidate weighs 1/k as in Eq. 7's
    (1/k) sum_j of per-candidate mean objectives, and steps weigh equally (the sum over t / T).
    """
    trajs = batch.trajectories
    batch.advantages = [[np.zeros(len(tt.action_token_ids)) for tt in t.turns] for t in trajs]
    for idx in group_indices(trajs, branch_key).values():
        rewards = np.array([trajs[i].turns[-1].reward if trajs[i].turns else 0.0 for i in idx])
        for i, a in zip(idx, zscore(rewards, eps=eps, std=std_norm)):
            if trajs[i].turns:
                batch.advantages[i][-1] = np.full(len(trajs[i].turns[-1].action_token_ids), a)
                batch.turn_mask[i] = [False] * (len(trajs[i].turns) - 1) + [True]
    batch.returns = np.array([t.turns[-1].reward if t.turns else 0.0 for t in trajs])
    batch.loss_agg = "seq_mean"
    return batch

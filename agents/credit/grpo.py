"""GRPO / Dr. GRPO: the group-normalised outcome, on every token of the trajectory."""

from __future__ import annotations

import numpy as np

from envgym.agents.credit.base import CreditBatch, broadcast, group_indices, zscore


def grpo(batch: CreditBatch, *, std_norm: bool = True, eps: float = 1e-6) -> CreditBatch:
    """A_i = (R_i - mean_g R) / (std_g R + eps), the same on every token of trajectory i.

    R_i is `batch.returns` (the sum of turn rewards unless a reward stage changed it); the
    group g is the G rollouts of one task. `std_norm=False` is Dr. GRPO's A_i = R_i - mean_g R,
    which removes the difficulty bias of dividing by a small std. std is unbiased (torch.std).
    """
    adv = np.zeros(len(batch.trajectories))
    for idx in group_indices(batch.trajectories).values():
        adv[idx] = zscore(batch.returns[idx], eps=eps, std=std_norm)
    batch.advantages = broadcast(batch.trajectories,
                                 [[adv[i]] * len(t.turns) for i, t in enumerate(batch.trajectories)])
    return batch

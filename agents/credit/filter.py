"""Dynamic sampling (DAPO, RAGEN): drop groups that carry no learning signal."""

from __future__ import annotations

import numpy as np

from envgym.agents.credit.base import CreditBatch, group_indices


def filter_groups(batch: CreditBatch, *, min_std: float = 1e-8) -> CreditBatch:
    """Drop group g when std_g(R) <= min_std, R being `batch.returns` (population std).

    A group where every rollout got the same return has no group-relative advantage and only
    dilutes the token mean; dropping it is DAPO's dynamic sampling. When advantages already
    exist (the filter comes after a base estimator), a zero-variance group is kept if any of
    its trained tokens still has a non-zero advantage: GiGPO's step term and IG's query bonus
    give signal to groups whose outcomes are all alike, so `["gigpo", "ig", "filter"]` keeps
    them. Logged: groups dropped and kept.
    """
    keep, dropped = [], 0
    for idx in group_indices(batch.trajectories).values():
        if np.std(batch.returns[idx]) > min_std or _has_signal(batch, idx, min_std):
            keep += idx
        else:
            dropped += 1
    batch.stats["filter/dropped_groups"] = float(dropped)
    batch.stats["filter/kept_groups"] = float(len(group_indices(batch.trajectories)) - dropped)
    return batch.subset(sorted(keep))


def _has_signal(batch: CreditBatch, idx: list[int], tol: float) -> bool:
    if batch.advantages is None:
        return False
    return any(m and a.size and np.abs(a).max() > tol for i in idx
               for a, m in zip(batch.advantages[i], batch.turn_mask[i]))

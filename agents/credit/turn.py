"""Turn-level credit: discounted turn returns per turn index, or MT-GRPO's outcome + λ·turn."""

from __future__ import annotations

import numpy as np

from envgym.agents.credit.base import CreditBatch, broadcast, group_indices, zscore


def discounted_returns(rewards: list[float], gamma: float) -> np.ndarray:
    """G_t = sum_{k >= t} gamma^(k-t) r_k."""
    out, acc = np.zeros(len(rewards)), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        acc = rewards[t] + gamma * acc
        out[t] = acc
    return out


def _per_index_zscore(values: list[np.ndarray], eps: float, std_norm: bool) -> list[np.ndarray]:
    """z-score entry t of every row across the rows that reach turn t."""
    out = [np.zeros(len(v)) for v in values]
    for t in range(max((len(v) for v in values), default=0)):
        rows = [r for r, v in enumerate(values) if len(v) > t]
        z = zscore(np.array([values[r][t] for r in rows]), eps=eps, std=std_norm)
        for r, a in zip(rows, z):
            out[r][t] = a
    return out


def turn(batch: CreditBatch, *, mode: str = "return", gamma: float = 1.0, lam: float = 1.0,
         std_norm: bool = True, eps: float = 1e-6) -> CreditBatch:
    """Turn-level advantages in one of two forms.

    `mode="return"` (GEM-style): G_{i,t} = sum_{k>=t} gamma^(k-t) r_{i,k} over the turn rewards
    of trajectory i, and A_{i,t} = (G_{i,t} - mean_g G_{.,t}) / (std_g G_{.,t} + eps), the
    statistics taken per turn index t over the group members that reached turn t.

    `mode="mt_grpo"` (MT-GRPO, Zeng et al.): A^O_i is the group z-score of the outcome R_i
    (`batch.returns`) and A^T_{i,t} the group z-score of the turn reward r_{i,t} at index t;
    the tokens of turn t get A^O_i + lam * A^T_{i,t}, except the last turn, whose reward is the
    outcome itself and which gets A^O_i alone (MT-GRPO applies λ·A^T before the final answer).
    MT-GRPO uses eps = 1e-4.
    """
    trajs = batch.trajectories
    per_turn: list[list[float]] = [[] for _ in trajs]
    for idx in group_indices(trajs).values():
        rewards = [[tt.reward for tt in trajs[i].turns] for i in idx]
        if mode == "return":
            adv = _per_index_zscore([discounted_returns(r, gamma) for r in rewards], eps, std_norm)
        elif mode == "mt_grpo":
            outcome = zscore(batch.returns[idx], eps=eps, std=std_norm)
            turn_adv = _per_index_zscore([np.array(r, dtype=float) for r in rewards], eps, std_norm)
            adv = []
            for a_o, a_t in zip(outcome, turn_adv):
                row = a_o + lam * a_t
                if len(row):
                    row[-1] = a_o
                adv.append(row)
        else:
            raise ValueError(f"turn credit: mode must be 'return' or 'mt_grpo', not {mode!r}")
        for i, a in zip(idx, adv):
            per_turn[i] = list(a)
    batch.advantages = broadcast(trajs, per_turn)
    return batch

"""GiGPO: episode advantage plus ω × step advantage over steps that share an anchor state."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from envgym.agents.credit.base import CreditBatch, broadcast, group_indices, zscore
from envgym.agents.credit.turn import discounted_returns


def gigpo(batch: CreditBatch, *, omega: float = 1.0, gamma: float = 0.95,
          std_norm: bool = True, eps: float = 1e-6) -> CreditBatch:
    """A_{i,t} = A^E_i + omega * A^S_{i,t}  (GiGPO Eq. 3, 5, 6, 7, 8).

    A^E_i = (R_i - mean_g R) / (std_g R + eps) over the episode group g (`batch.returns`).
    R_{i,t} = sum_{k>=t} gamma^(k-t) r_{i,k} is the discounted step return. Steps of group g
    taken in the same state form a step group S, and A^S_{i,t} = (R_{i,t} - mean_S) /
    (std_S + eps). A turn's `state_key` is the state *after* its action (the engine records
    the step's info), so the anchor of turn t is `turns[t-1].state_key`, and every turn 0 of a
    group shares the task's initial state. A step group of one member has its own mean as
    baseline, so its step advantage is 0; a turn whose anchor is unknown is a singleton.
    Logged: the mean step-group size and the share of singleton steps.
    """
    trajs = batch.trajectories
    per_turn: list[list[float]] = [[] for _ in trajs]
    sizes: Counter[int] = Counter()
    for idx in group_indices(trajs).values():
        episode = zscore(batch.returns[idx], eps=eps, std=std_norm)
        step_returns = {i: discounted_returns([t.reward for t in trajs[i].turns], gamma) for i in idx}
        anchors: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i in idx:
            for t in range(len(trajs[i].turns)):
                anchor = "__start__" if t == 0 else trajs[i].turns[t - 1].state_key
                anchors[anchor or f"__single_{i}_{t}"].append((i, t))
        step_adv = {i: np.zeros(len(trajs[i].turns)) for i in idx}
        for members in anchors.values():
            sizes[len(members)] += 1
            z = zscore(np.array([step_returns[i][t] for i, t in members]), eps=eps, std=std_norm)
            for (i, t), a in zip(members, z):
                step_adv[i][t] = a
        for i, a_e in zip(idx, episode):
            per_turn[i] = list(a_e + omega * step_adv[i])
    n_groups = sum(sizes.values())
    batch.stats["gigpo/step_group_size_mean"] = (
        sum(k * v for k, v in sizes.items()) / n_groups if n_groups else 0.0)
    batch.stats["gigpo/singleton_fraction"] = sizes.get(1, 0) / n_groups if n_groups else 0.0
    batch.stats["gigpo/step_groups"] = float(n_groups)
    batch.advantages = broadcast(trajs, per_turn)
    return batch

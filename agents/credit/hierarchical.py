"""ARTIST's hierarchical credit: separate groups and advantages for controller and reasoner."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from envgym.agents.credit.base import CreditBatch, group_indices, zscore
from envgym.trajectory import Trajectory


def _role_reward(traj: Trajectory, role: str) -> float:
    return sum(t.reward for t in traj.turns if _role(t.role) == role)


def _role(role: str | None) -> str:
    return "controller" if role == "controller" else "reasoner"


def hierarchical(batch: CreditBatch, *, reasoner_adv: str = "zscore",
                 eps: float = 1e-8, sigma_floor: float = 1e-6) -> CreditBatch:
    """ARTIST §5.3, per question (group):

    * Controller rollouts c = 1..C are told apart by `meta["controller_id"]` (trajectories
      sharing it are reasoner fan-outs of one controller rollout; without it each trajectory is
      its own). R_c, the sum of controller-turn rewards, gives A_c = (R_c - mean) / (sigma + eps)
      (population sigma) on the controller tokens of the first trajectory of c; the copies'
      controller turns are masked so each controller rollout trains once. With C = 1 (ARTIST's
      released configs) A_c = 0: sample >= 2 controller rollouts per question; such groups are
      counted in `hierarchical/single_controller_groups`.
    * Reasoner: sigma_c is the population std of the reasoner rewards r (sum of reasoner-turn
      rewards) within controller group c; one group is drawn with p_c ∝ sigma_c + 1e-6
      (variance-guided) and its reasoner turns get (r - mean) / (sigma + eps)
      (`reasoner_adv="zscore"`) or RLOO r_i - (sum r - r_i) / (K - 1) (`"rloo"`). Reasoner
      turns of the other groups are masked.
    """
    trajs = batch.trajectories
    per_turn = [[0.0] * len(t.turns) for t in trajs]
    single = 0
    for idx in group_indices(trajs).values():
        by_ctrl: dict[str, list[int]] = defaultdict(list)
        for i in idx:
            by_ctrl[str(trajs[i].meta.get("controller_id", f"__own_{i}"))].append(i)
        ctrl_groups = list(by_ctrl.values())
        single += len(ctrl_groups) == 1
        heads = [g[0] for g in ctrl_groups]
        ctrl_adv = zscore(np.array([_role_reward(trajs[h], "controller") for h in heads]),
                          eps=eps, ddof=0)
        for g, a in zip(ctrl_groups, ctrl_adv):
            for i in g:
                for t, tt in enumerate(trajs[i].turns):
                    if _role(tt.role) == "controller":
                        per_turn[i][t] = a if i == g[0] else 0.0
                        batch.turn_mask[i][t] = i == g[0]
        rewards = [np.array([_role_reward(trajs[i], "reasoner") for i in g]) for g in ctrl_groups]
        sigma = np.array([r.std() for r in rewards]) + sigma_floor
        chosen = int(batch.rng.choice(len(ctrl_groups), p=sigma / sigma.sum()))
        for c, (g, r) in enumerate(zip(ctrl_groups, rewards)):
            adv = _reasoner_advantage(r, reasoner_adv, eps) if c == chosen else np.zeros(len(g))
            for i, a in zip(g, adv):
                for t, tt in enumerate(trajs[i].turns):
                    if _role(tt.role) == "reasoner":
                        per_turn[i][t] = a
                        batch.turn_mask[i][t] = c == chosen
    batch.stats["hierarchical/single_controller_groups"] = float(single)
    batch.advantages = [[np.full(len(tt.action_token_ids), a) for tt, a in zip(t.turns, row)]
                        for t, row in zip(trajs, per_turn)]
    return batch


def _reasoner_advantage(r: np.ndarray, kind: str, eps: float) -> np.ndarray:
    if kind == "zscore":
        return zscore(r, eps=eps, ddof=0)
    if kind == "rloo":
        return r - (r.sum() - r) / (len(r) - 1) if len(r) > 1 else np.zeros_like(r)
    raise ValueError(f"credit `hierarchical`: reasoner_adv must be 'zscore' or 'rloo', not {kind!r}")

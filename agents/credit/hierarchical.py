"""ARTIST's hierarchical credit: separate groups and advantages for controller and reasoner.

The estimator reads the rollout structure from `meta` (written by
`envgym.hierarchy.collect_hierarchical`, which `envgym train` uses for this chain) and raises
when a trajectory lacks it: falling back to "one controller rollout per trajectory" would
silently give every reasoner group one member and every reasoner advantage 0.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from envgym.agents.credit.base import CreditBatch, group_indices, zscore
from envgym.trajectory import Trajectory, Turn

REQUIRED_META = ("controller_id", "sample", "fork_turn")


def hierarchical(batch: CreditBatch, *, reasoner_adv: str = "zscore",
                 eps: float = 1e-8, sigma_floor: float = 1e-6) -> CreditBatch:
    """ARTIST §5.3, per question (group):

    * Controller: the question's C controller rollouts (`meta["controller_id"]`) each have
      R_c, the controller part of the rewards of the rollout's own trajectory (`sample` 0):
      every turn's `info["role_components"]["controller"]`, else its reward if its `role` is
      controller. That includes the consistency term 3c, c the mean accuracy of its N
      reasoner samples. A_c = (R_c - mean) / (sigma + eps) (population sigma) goes on every
      controller token of sample 0; the forks' copies of the prefix are masked, so each
      controller rollout trains once. C = 1 gives A_c = 0; such questions are counted in
      `hierarchical/single_controller_groups`.
    * Reasoner: r is a sample's reasoner reward on its own turns (from `meta["fork_turn"]`
      on). sigma_c is the population std of r over the N samples of controller rollout c;
      one c is drawn with p_c ∝ sigma_c + 1e-6 (variance-guided) and its samples' own turns
      get (r - mean) / (sigma + eps) (`reasoner_adv="zscore"`) or RLOO
      r_i - (sum r - r_i) / (K - 1) (`"rloo"`); the other reasoner turns are masked.
      `hierarchical/reasoner_trained_fraction` is the share of samples whose answer is trained.
    """
    trajs = batch.trajectories
    _check_meta(trajs)
    per_turn = [[0.0] * len(t.turns) for t in trajs]
    mask = [[False] * len(t.turns) for t in trajs]
    single = questions = trained = samples = 0
    for idx in group_indices(trajs).values():
        by_ctrl: dict[str, list[int]] = defaultdict(list)
        for i in idx:
            by_ctrl[str(trajs[i].meta["controller_id"])].append(i)
        groups = [sorted(g, key=lambda i: trajs[i].meta["sample"]) for g in by_ctrl.values()]
        questions += 1
        single += len(groups) == 1
        _controller(trajs, groups, per_turn, mask, eps)
        trained += _reasoner(trajs, groups, per_turn, mask, reasoner_adv, eps, sigma_floor,
                             batch.rng)
        samples += sum(len(g) for g in groups)
    batch.turn_mask = [[m and keep for m, keep in zip(row, old)]
                       for row, old in zip(mask, batch.turn_mask)]
    batch.stats.update({
        "hierarchical/controller_groups": float(questions),
        "hierarchical/single_controller_groups": float(single),
        "hierarchical/reasoner_trained_fraction": trained / max(1, samples),
        "hierarchical/consistency": float(np.mean([t.meta.get("consistency", 0.0)
                                                   for t in trajs])) if trajs else 0.0,
    })
    batch.advantages = [[np.full(len(tt.action_token_ids), a) for tt, a in zip(t.turns, row)]
                        for t, row in zip(trajs, per_turn)]
    return batch


def role_reward(turn: Turn, role: str) -> float:
    """The part of a turn's reward that belongs to `role` (controller or reasoner)."""
    parts = turn.info.get("role_components")
    if parts is not None:
        return float(sum(parts.get(role, {}).values()))
    if turn.role not in ("controller", "reasoner"):
        raise ValueError(f"credit `hierarchical`: a turn has role {turn.role!r} and no "
                         "info['role_components']; the environment must tag each turn's role")
    return turn.reward if turn.role == role else 0.0


def _check_meta(trajs: list[Trajectory]) -> None:
    for t in trajs:
        missing = [k for k in REQUIRED_META if k not in t.meta]
        if missing:
            raise ValueError(
                f"credit `hierarchical`: trajectory {t.group_id!r} lacks meta {missing}. ARTIST's "
                "structure (C controller rollouts x N reasoner samples) comes from "
                "envgym.hierarchy.collect_hierarchical, which `envgym train` runs for this "
                "chain when rollout.group_size >= 2.")


def _controller(trajs, groups, per_turn, mask, eps) -> None:
    heads = [g[0] for g in groups]
    rewards = np.array([sum(role_reward(tt, "controller") for tt in trajs[h].turns) for h in heads])
    for h, a in zip(heads, zscore(rewards, eps=eps, ddof=0)):
        for t, tt in enumerate(trajs[h].turns):
            # ARTIST retries a failed first segment; the failed tries are not actions it trains
            if tt.role == "controller" and not tt.info.get("first_seg_retry"):
                per_turn[h][t], mask[h][t] = float(a), True


def _reasoner(trajs, groups, per_turn, mask, kind, eps, sigma_floor, rng) -> int:
    """Train one variance-drawn controller rollout's samples; returns how many."""
    def own(i: int) -> range:
        return range(max(0, int(trajs[i].meta["fork_turn"])), len(trajs[i].turns))

    rewards = [np.array([sum(role_reward(trajs[i].turns[t], "reasoner") for t in own(i))
                         for i in g]) for g in groups]
    sigma = np.array([r.std() for r in rewards]) + sigma_floor
    chosen = int(rng.choice(len(groups), p=sigma / sigma.sum()))
    trained = 0
    for i, a in zip(groups[chosen], _reasoner_advantage(rewards[chosen], kind, eps)):
        turns = [t for t in own(i) if trajs[i].turns[t].role == "reasoner"]
        for t in turns:
            per_turn[i][t], mask[i][t] = float(a), True
        trained += bool(turns)
    return trained


def _reasoner_advantage(r: np.ndarray, kind: str, eps: float) -> np.ndarray:
    if kind == "zscore":
        return zscore(r, eps=eps, ddof=0)
    if kind == "rloo":
        return r - (r.sum() - r) / (len(r) - 1) if len(r) > 1 else np.zeros_like(r)
    raise ValueError(f"credit `hierarchical`: reasoner_adv must be 'zscore' or 'rloo', not {kind!r}")

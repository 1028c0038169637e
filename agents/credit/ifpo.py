"""IFPO (ASCL): reweight advantages by the inverse frequency of the rollout's action class.

The paper does not publish IFPO's formula (methods.md §6.3); this exact form is ours.
"""

from __future__ import annotations

from collections import Counter

from envgym.agents.credit.base import CreditBatch, group_indices
from envgym.trajectory import Trajectory


def action_class(traj: Trajectory) -> str:
    """The rollout's one class: `outcome["action_class"]` when the environment reports it,
    else the label of its last labelled turn.

    Environments label turns cumulatively (SafetyRules: `consult` once any lookup happened),
    so the last label is the rollout's. Taking the union of per-turn labels instead would
    make a malformed turn before a lookup a class of its own ("consult+direct") and split
    the consulting rollouts of a group in two.
    """
    if "action_class" in traj.outcome:
        return str(traj.outcome["action_class"])
    labels = [str(t.info["action_class"]) for t in traj.turns if "action_class" in t.info]
    return labels[-1] if labels else "none"


def ifpo(batch: CreditBatch) -> CreditBatch:
    """Ã_i = w_{c(i)} A_i with w_c = G / (|C| n_c) inside each group.

    G is the group size, C the set of action classes present in the group and n_c the number
    of rollouts of class c. The weights average to 1 over the group
    ((1/G) sum_c n_c G/(|C| n_c) = 1), so the overall advantage scale is unchanged while a
    class that most rollouts take (e.g. always consulting the rulebook) weighs less per rollout.
    """
    adv = batch.require_advantages("ifpo")
    weights = []
    for idx in group_indices(batch.trajectories).values():
        classes = [action_class(batch.trajectories[i]) for i in idx]
        counts = Counter(classes)
        for i, c in zip(idx, classes):
            w = len(idx) / (len(counts) * counts[c])
            adv[i] = [a * w for a in adv[i]]
            weights.append(w)
    batch.stats["ifpo/weight_max"] = max(weights, default=0.0)
    return batch

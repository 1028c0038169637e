"""The batch every credit estimator reads and writes, and the statistics they share.

An estimator is a function `fn(batch: CreditBatch, **options) -> CreditBatch`. Estimators
compose left to right: a reward stage (`calibrated`) changes `returns`; a base stage
(`grpo`, `turn`, `gigpo`, `slate`, `hierarchical`) writes `advantages`; modifiers (`ig`,
`ifpo`) rescale or add to them; `filter` drops groups. Everything is plain numpy so that the
unit tests can check hand-computed numbers.

Advantages are per token: `advantages[i][t]` is a float array with one entry per action token
of turn `t` of trajectory `i` (`len(turn.action_token_ids)`). `turn_mask[i][t]` says whether
that turn is trained at all (SLATE prefixes and ARTIST's unsampled reasoner groups are not).

Failed episodes (`Trajectory.error`: a dead policy server, a crashed sandbox, a timeout) are
not zero-reward samples: they say nothing about the policy, and a zero in a group shifts
every member's baseline. `split_failed` takes them out before any estimator runs, so a group
with a failed member is normalised exactly as the group without it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envgym.trajectory import Trajectory

__all__ = ["CreditBatch", "broadcast", "group_indices", "group_key", "split_failed", "zscore"]


@dataclass
class CreditBatch:
    trajectories: list[Trajectory]
    returns: np.ndarray | None = None
    advantages: list[list[np.ndarray]] | None = None
    turn_mask: list[list[bool]] | None = None
    stats: dict[str, float] = field(default_factory=dict)
    loss_agg: str | None = None
    """A loss-aggregation hint for the trainer (SLATE asks for `seq_mean`)."""
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    tokenizer: Any = None
    """Maps character spans to tokens (`ig`); needs `decode(list[int]) -> str`."""

    def __post_init__(self) -> None:
        if self.returns is None:
            self.returns = np.array([t.total_reward for t in self.trajectories], dtype=np.float64)
        if self.turn_mask is None:
            self.turn_mask = [[True] * len(t.turns) for t in self.trajectories]

    def require_advantages(self, who: str) -> list[list[np.ndarray]]:
        if self.advantages is None:
            raise ValueError(f"credit `{who}` modifies advantages: put a base estimator "
                             "(grpo, turn, gigpo, slate, hierarchical) before it in the chain")
        return self.advantages

    def subset(self, keep: list[int]) -> CreditBatch:
        """The batch restricted to trajectories `keep` (in order)."""
        adv = None if self.advantages is None else [self.advantages[i] for i in keep]
        return CreditBatch([self.trajectories[i] for i in keep], self.returns[keep], adv,
                           [self.turn_mask[i] for i in keep], self.stats, self.loss_agg,
                           self.rng, self.tokenizer)


def split_failed(trajs: list[Trajectory]) -> tuple[list[Trajectory], list[Trajectory]]:
    """`(completed, failed)`, each in the original order; only completed ones get credit."""
    return [t for t in trajs if t.error is None], [t for t in trajs if t.error is not None]


def group_key(traj: Trajectory) -> str:
    """Trajectories of one task sampled together share a group (GRPO's G rollouts)."""
    return str(traj.group_id if traj.group_id is not None else traj.task_id)


def group_indices(trajs: list[Trajectory], key=group_key) -> dict[Any, list[int]]:
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, t in enumerate(trajs):
        groups[key(t)].append(i)
    return dict(groups)


def zscore(x: np.ndarray, *, eps: float = 1e-6, std: bool = True, ddof: int = 1) -> np.ndarray:
    """(x - mean) / (std + eps); with `std=False` only the mean is removed (Dr. GRPO).

    A single element has no baseline, so it gets 0 (its own mean). `ddof=1` is torch.std's
    unbiased estimate, which GRPO, GiGPO and SLATE use.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size <= 1:
        return np.zeros_like(x)
    centred = x - x.mean()
    return centred / (x.std(ddof=ddof) + eps) if std else centred


def broadcast(trajs: list[Trajectory], per_turn: list[list[float]]) -> list[list[np.ndarray]]:
    """Per-turn scalars -> per-token arrays (one entry per action token)."""
    return [[np.full(len(turn.action_token_ids), float(a)) for turn, a in zip(t.turns, row)]
            for t, row in zip(trajs, per_turn)]

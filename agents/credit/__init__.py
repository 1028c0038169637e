"""Credit assignment: pure functions from grouped trajectories to per-token advantages.

Estimators compose by name, left to right, each with its own options:

    batch = compute_credit(trajs, ["gigpo", "ig", "filter"], {"gigpo": {"omega": 0.5}},
                           tokenizer=tok)
    batch.advantages[i][t]   # per action token of turn t of (kept) trajectory i

Reward stages (`calibrated`) change the returns the base estimators normalise; base stages
(`grpo`, `turn`, `gigpo`, `slate`, `hierarchical`) write advantages; `ig` and `ifpo` modify
them; `filter` drops groups without signal.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from envgym.agents.credit.base import CreditBatch, group_indices, group_key, zscore
from envgym.agents.credit.calibrated import calibrated
from envgym.agents.credit.filter import filter_groups
from envgym.agents.credit.gigpo import gigpo
from envgym.agents.credit.grpo import grpo
from envgym.agents.credit.hierarchical import hierarchical
from envgym.agents.credit.ifpo import ifpo
from envgym.agents.credit.ig import ig
from envgym.agents.credit.slate import slate
from envgym.agents.credit.turn import turn
from envgym.trajectory import Trajectory

__all__ = ["BASE", "REGISTRY", "CreditBatch", "compute_credit", "group_indices", "group_key",
           "validate_chain", "zscore"]

REGISTRY: dict[str, Callable[..., CreditBatch]] = {
    "grpo": grpo, "turn": turn, "gigpo": gigpo, "slate": slate, "hierarchical": hierarchical,
    "ig": ig, "ifpo": ifpo, "calibrated": calibrated, "filter": filter_groups,
}
BASE = ("grpo", "turn", "gigpo", "slate", "hierarchical")
_REWARD_STAGES = ("calibrated",)


def validate_chain(chain: Sequence[str], options: dict[str, dict[str, Any]] | None = None) -> None:
    """Raise ValueError naming the bad entry: unknown estimator, option or order."""
    options = options or {}
    for name in chain:
        if name not in REGISTRY:
            raise ValueError(f"unknown credit estimator {name!r}; choose from {sorted(REGISTRY)}")
    bases = [n for n in chain if n in BASE]
    if len(bases) != 1:
        raise ValueError(f"the credit chain needs exactly one base estimator of {list(BASE)}, "
                         f"got {bases or 'none'}")
    first_base = chain.index(bases[0])
    for n in chain:
        if n in ("ig", "ifpo") and chain.index(n) < first_base:
            raise ValueError(f"credit {n!r} modifies advantages: put it after {bases[0]!r}")
        if n in _REWARD_STAGES and chain.index(n) > first_base:
            raise ValueError(f"credit {n!r} changes rewards: put it before {bases[0]!r}")
    for name, opts in options.items():
        if name not in REGISTRY:
            raise ValueError(f"options given for unknown credit estimator {name!r}")
        params = set(inspect.signature(REGISTRY[name]).parameters) - {"batch"}
        for key in opts:
            if key not in params:
                raise ValueError(f"credit {name!r} has no option {key!r}; options: {sorted(params)}")


def compute_credit(trajectories: list[Trajectory], chain: Sequence[str],
                   options: dict[str, dict[str, Any]] | None = None, *,
                   tokenizer: Any = None, seed: int = 0) -> CreditBatch:
    """Run the chain and add advantage statistics over trained tokens to `batch.stats`."""
    options = options or {}
    validate_chain(chain, options)
    batch = CreditBatch(list(trajectories), rng=np.random.default_rng(seed), tokenizer=tokenizer)
    for name in chain:
        batch = REGISTRY[name](batch, **options.get(name, {}))
    values = [a for row, mask in zip(batch.advantages, batch.turn_mask)
              for a, m in zip(row, mask) if m and a.size]
    flat = np.concatenate(values) if values else np.zeros(0)
    batch.stats.update({
        "adv/mean": float(flat.mean()) if flat.size else 0.0,
        "adv/std": float(flat.std()) if flat.size else 0.0,
        "adv/abs_max": float(np.abs(flat).max()) if flat.size else 0.0,
        "adv/zero_fraction": float((np.abs(flat) < 1e-8).mean()) if flat.size else 1.0,
        "credit/trajectories": float(len(batch.trajectories)),
    })
    return batch

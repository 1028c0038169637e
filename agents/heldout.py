"""Held-out evaluation, checked by task id: which tasks a config's train and eval seeds reach.

Seeds are not tasks. An environment that cycles through a finite pool picks `pool[seed % N]`,
so disjoint seed ranges can still train and evaluate on the same tasks, and `eval_kwargs`
(`{ split = "test" }`) can swap the pool for another, or leave it as it was. So the check
compares task ids: an environment lists its ordered pool with the optional classmethod
`task_ids(kwargs) -> list[str] | None` (None: it cannot say cheaply, e.g. a Hub dataset), for
the training kwargs and for the kwargs with `eval_kwargs` applied, and no id may be reached
from both. Environments that generate a new task from every seed declare no pool.
"""

from __future__ import annotations

from typing import Any

__all__ = ["pool_ids", "reached", "shared_task_ids"]


def pool_ids(env_id: str, kwargs: dict[str, Any]) -> list[str] | None:
    """The environment's ordered task pool under `kwargs`, or None when it declares none."""
    try:
        from envgym.runstate import env_class
        listing = getattr(env_class(env_id), "task_ids", None)
    except Exception:  # noqa: BLE001 - an unknown id is reported by the caller
        return None
    return None if not callable(listing) else _as_list(listing(dict(kwargs)))


def _as_list(ids: Any) -> list[str] | None:
    return None if ids is None else [str(i) for i in ids]


def reached(ids: list[str], seeds: tuple[int, int]) -> set[str]:
    """The ids that seeds [lo, hi) pick from `ids` by `seed % len(ids)`."""
    lo, hi = seeds
    if not ids:
        return set()
    if hi - lo >= len(ids):
        return set(ids)
    return {ids[s % len(ids)] for s in range(lo, hi)}


def shared_task_ids(env_id: str, kwargs: dict[str, Any], eval_kwargs: dict[str, Any],
                    train_seeds: tuple[int, int], eval_seeds: tuple[int, int]
                    ) -> list[str] | None:
    """Task ids both ranges reach (sorted; empty when the evaluation is held out), or None
    when the environment cannot list its pools."""
    train = pool_ids(env_id, kwargs)
    evaluation = pool_ids(env_id, {**kwargs, **eval_kwargs}) if eval_kwargs else train
    if train is None or evaluation is None:
        return None
    return sorted(reached(train, train_seeds) & reached(evaluation, eval_seeds))

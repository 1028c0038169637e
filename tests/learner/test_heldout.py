"""Every shipped config evaluates on held-out tasks, compared by task id (issue 35, item 3)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envgym.agents.config import load_config
from envgym.agents.heldout import pool_ids, reached, shared_task_ids
from envgym.agents.structure import shared_tasks, task_pool_size
from envgym.errors import InvalidConfig

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "agents" / "configs").glob("*.toml"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_shipped_config_evaluates_on_held_out_tasks(path):
    cfg = load_config(path)
    for env in cfg.envs:
        train = pool_ids(env.id, env.kwargs)
        evaluation = pool_ids(env.id, {**env.kwargs, **env.eval_kwargs})
        if train is not None and evaluation is not None:  # a finite pool: compare the ids
            assert not reached(train, env.train_seeds) & reached(evaluation, env.eval_seeds)
            assert reached(evaluation, env.eval_seeds)
            continue
        pool = task_pool_size(env.id, env.kwargs)
        assert not env.eval_kwargs or pool is None, f"{path.name}: {env.id} cannot be checked"
        if pool is not None:  # only a size: seeds disjoint modulo the pool
            assert shared_tasks(env.train_seeds, env.eval_seeds, pool) == 0
        else:  # a generator: every seed is a new task, and the ranges are disjoint
            assert env.id == "envgym/TimeSeries-v0" and env.kwargs.get("dataset") is None
            (a, b), (c, d) = env.train_seeds, env.eval_seeds
            assert b <= c or d <= a


def _raw(path: Path) -> dict:
    return tomllib.loads(path.read_text())


@pytest.mark.parametrize("name", ["search_qwen05b", "search_qwen15b_slate", "code_qwen15b"])
def test_the_old_search_and_code_settings_are_refused(name):
    """What these configs shipped before: eval seeds past the train range, on the same pool."""
    raw = _raw(CONFIGS[[p.stem for p in CONFIGS].index(name)])
    env = raw["envs"][0]
    env["eval_kwargs"] = {k: v for k, v in env.get("eval_kwargs", {}).items() if k != "split"}
    env["kwargs"] = {k: v for k, v in env.get("kwargs", {}).items() if k != "split"}
    env["eval_seeds"] = [1_000_000, 1_000_256]
    with pytest.raises(InvalidConfig, match="reach .* of the same tasks"):
        load_config(raw)


def test_the_check_compares_ids_when_eval_kwargs_swap_the_pool():
    same = shared_task_ids("envgym/Search-v0", {}, {"split": "train"}, (0, 10), (10, 20))
    assert same == []  # seeds 0-9 and 10-19 of one 800-question pool: distinct questions
    wrapped = shared_task_ids("envgym/Search-v0", {}, {"split": "train"}, (0, 10), (800, 810))
    assert wrapped == sorted(reached(pool_ids("envgym/Search-v0", {}), (0, 10)))
    assert shared_task_ids("envgym/Search-v0", {}, {"split": "test"}, (0, 10**6), (0, 200)) == []


def test_builtin_code_problems_split_into_disjoint_train_and_test():
    from envgym.environments.code.problems import load_builtin

    train, test, every = (load_builtin(s) for s in ("train", "test", "all"))
    assert {p.id for p in train}.isdisjoint({p.id for p in test})
    assert sorted(p.id for p in train + test) == sorted(p.id for p in every)
    assert len(test) == 14 and len(every) == 42
    with pytest.raises(Exception, match="splits"):
        load_builtin("validation")

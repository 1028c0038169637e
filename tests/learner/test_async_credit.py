"""Every credit estimator under `rollout.max_staleness = 1`, on real engine trajectories.

Each case is a shipped config that uses the estimator, scaled to two CPU steps of a very
small model (`tests/e2e/test_shipped_configs.scaled`), re-validated with max_staleness 1 (so
the validator accepts it) and trained: step 2 is sampled by version 0 while update 1 runs,
and its advantages must be finite, computed over groups of one task each, from turns that
all carry their version. `calibrated` runs here with one shared policy; with ILR's two
policies (`[agents.ID]`, one version stream each) in test_async_ilr.py."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from envgym.agents.async_rollouts import VERSIONS
from envgym.agents.config import TrainConfig
from envgym.trajectory import read_trajectories

from .async_fixture import small_model

CONFIGS = Path(__file__).resolve().parents[2] / "agents" / "configs"
CASES = {  # estimator -> (shipped config, chain)
    "grpo": ("vllm_cpu.toml", ["grpo"]),
    "turn": ("demo_cpu.toml", ["turn"]),
    "gigpo": ("timeseries_qwen15b.toml", ["gigpo"]),
    "ig": ("search_qwen05b.toml", ["grpo", "ig"]),
    "slate": ("search_qwen15b_slate.toml", ["slate"]),
    "ifpo": ("safety_qwen05b.toml", ["grpo", "ifpo"]),
    "hierarchical": ("timeseries_artist_cpu.toml", ["hierarchical"]),
    "calibrated": ("debate_ilr_cpu.toml", ["calibrated", "grpo"]),
}


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return small_model(tmp_path_factory.mktemp("credit") / "m")


def _async_config(name: str, chain: list[str], model: Path, out: Path) -> TrainConfig:
    from tests.e2e.test_shipped_configs import scaled

    cfg = scaled(CONFIGS / name, model, out)
    cfg.steps, cfg.agents, cfg.credit = 2, {}, chain
    cfg.credit_options = {k: v for k, v in cfg.credit_options.items() if k in chain}
    cfg.rollout.max_staleness, cfg.rollout.deterministic = 1, True
    cfg.log.trajectories = True
    return TrainConfig.model_validate(cfg.model_dump())  # the validator accepts it


@pytest.mark.parametrize("estimator", list(CASES))
def test_estimator_advantages_are_well_defined_one_version_behind(estimator, model, tmp_path):
    from envgym.agents.report import read_metrics
    from envgym.agents.trainer import train

    name, chain = CASES[estimator]
    cfg = _async_config(name, chain, model, tmp_path / "run")
    train(cfg, eval_at_start=False)
    last = read_metrics(tmp_path / "run/metrics.jsonl")[-1]
    assert last["step"] == 2 and last["async/staleness/1"] == 1.0
    trajs = list(read_trajectories(tmp_path / "run/trajectories/step_000002.jsonl"))
    trained = [t for t in trajs if t.meta["credit"] is not None]
    assert trained, "credit trained nothing"
    for t in trained:
        assert t.meta[VERSIONS] == [0] * len(t.turns)  # sampled one version back
        advantages = [a for turn in t.meta["credit"]["advantages"] for a in turn]
        assert all(math.isfinite(a) for a in advantages)
    groups: dict[str, set] = {}
    for t in trained:
        groups.setdefault(t.group_id, set()).add((t.env_id, t.seed))
    assert all(len(tasks) == 1 for tasks in groups.values())  # a group is one task
    assert math.isfinite(last["async/mismatch_kl"]) and math.isfinite(last["loss"])


# ---- IG and SLATE where their signals exist: a warm-started model that searches -----------

def _warm_async(name: str, out: Path, **kw) -> Path:
    """`warm_scaled`'s config (SFT warm start, trajectory log) for two steps at staleness 1."""
    from tests.e2e.test_shipped_configs import warm_scaled

    path = warm_scaled(name, out, **kw)
    text = path.read_text().replace("\nsteps = 1\n", "\nsteps = 2\n", 1)
    path.write_text(text.replace("[rollout]\n", "[rollout]\nmax_staleness = 1\n", 1))
    return path


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_ig_scores_and_credits_searches_sampled_one_version_back(tmp_path):
    import numpy as np

    from tests.e2e.test_shipped_configs import envgym_train, logged, query_span_advantages

    envgym_train(_warm_async("search_qwen05b.toml", tmp_path / "ig", tasks=8, batch=8,
                             mix="{ oracle = 0.8, heuristic = 0.1, random = 0.1 }"))
    row = logged(tmp_path / "ig", 2)
    assert row["async/staleness/1"] == 1.0
    assert row["ig/n_steps"] > 0 and row["ig/modulated_tokens"] > 0
    assert np.isfinite(row["ig/bonus_abs_mean"]) and row["ig/bonus_abs_mean"] != 0
    spans = query_span_advantages(tmp_path / "ig")
    assert spans and all(np.isfinite(q).all() for q, _ in spans)
    assert any(np.abs(q).max() > 0 for q, _ in spans)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_slate_siblings_sampled_one_version_back_get_nonzero_advantages(tmp_path):
    import numpy as np

    from tests.e2e.test_shipped_configs import envgym_train, logged, query_span_advantages

    envgym_train(_warm_async("search_qwen15b_slate.toml", tmp_path / "slate"))
    row = logged(tmp_path / "slate", 2)
    assert row["async/staleness/1"] == 1.0 and row["slate/trees"] == 2
    assert row["adv/zero_fraction"] < 1 and row["slate/search_adv_abs_mean"] > 0
    spans = query_span_advantages(tmp_path / "slate")
    assert spans and all(np.isfinite(q).all() for q, _ in spans)

"""ARTIST and ILR through `envgym train` with their shipped CPU configs (scaled down: the
session's very small model, fewer tasks): the structure the estimators need is built by the
engine and trainer, and the run-level state is checkpointed and resumed exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from envgym.agents.config import load_config

CONFIGS = Path(__file__).resolve().parents[2] / "agents" / "configs"


def _config(name: str, out: Path, model: Path | None, steps: int, **rollout):
    cfg = load_config(CONFIGS / name)
    cfg.output_dir, cfg.steps, cfg.checkpoint_every = out, steps, 1
    if model is not None:
        cfg.model.policy, cfg.model.warm_start = str(model), "none"
    cfg.rollout.eval_episodes, cfg.rollout.deterministic = 2, True
    for k, v in rollout.items():
        setattr(cfg.rollout, k, v)
    cfg.log.trajectories, cfg.log.progress = True, False
    return cfg


def _step_trajectories(out: Path, step: int):
    from envgym.trajectory import read_trajectories
    return list(read_trajectories(out / "trajectories" / f"step_{step:06d}.jsonl"))


def _run_state(out: Path, step: int) -> dict:
    path = out / "checkpoints" / f"step_{step:07d}" / "state.pt"
    return torch.load(path, weights_only=False)["run_state"]


def test_debate_ilr_config_trains_with_run_level_irt_that_resumes_exactly(tmp_path, small_model):
    from envgym.agents.report import read_metrics
    from envgym.agents.trainer import train

    small = {"tasks_per_step": 4, "group_size": 2, "max_tokens": 12}
    train(_config("debate_ilr_cpu.toml", tmp_path / "a", small_model, 2, **small),
          eval_at_start=False)
    for m in read_metrics(tmp_path / "a/metrics.jsonl"):
        assert m.get("rollout/failed", 0.0) == 0.0 and m.get("eval/Debate-v0/failed", 0.0) == 0.0
    irt = _run_state(tmp_path / "a", 2)["state"]["envgym/Debate-v0"]["irt"]
    assert np.abs(irt.theta).max() > 0.05 and len(irt.history) == 2 * 4 * 2 * 2
    trajs = [t for s in (1, 2) for t in _step_trajectories(tmp_path / "a", s)]
    assert all(t.meta["mode"] in ("cooperative", "competitive") for t in trajs)
    levels = {m: {t.meta["level"] for t in trajs if t.meta["mode"] == m}
              for m in ("cooperative", "competitive")}
    assert all(levels.values()) and len(levels["cooperative"] | levels["competitive"]) >= 3
    trained = [t for t in trajs if t.meta["credit"] is not None]
    # the shipped config trains two policies ([agents.agent_0], [agents.agent_1]): both learn
    assert {t.agent_id for t in trained} == {"agent_0", "agent_1"}
    # kill-and-resume: one step, then resume to two; the run's IRT state matches exactly
    train(_config("debate_ilr_cpu.toml", tmp_path / "b", small_model, 1, **small),
          eval_at_start=False)
    train(_config("debate_ilr_cpu.toml", tmp_path / "b", small_model, 2, **small), resume=True)
    again = _run_state(tmp_path / "b", 2)["state"]["envgym/Debate-v0"]["irt"]
    np.testing.assert_array_equal(again.theta, irt.theta)
    assert list(again.history) == list(irt.history)


def test_artist_config_builds_controller_groups_through_the_trainer(tmp_path, small_model):
    from envgym.agents.report import read_metrics
    from envgym.agents.trainer import train

    train(_config("timeseries_artist_cpu.toml", tmp_path / "r", small_model, 1,
                  tasks_per_step=2, max_tokens=12, reasoner_samples=3), eval_at_start=False)
    step = read_metrics(tmp_path / "r/metrics.jsonl")[-1]
    assert step["hierarchical/controller_groups"] == 2
    assert step["hierarchical/single_controller_groups"] == 0
    for t in _step_trajectories(tmp_path / "r", 1):
        assert {"controller_id", "sample", "fork_turn", "question"} <= set(t.meta)


@pytest.mark.slow
def test_artist_config_from_its_sft_warm_start_trains_both_roles(tmp_path):
    """The shipped config as is (tiny model, SFT warm start), three steps."""
    from envgym.agents.credit.hierarchical import role_reward
    from envgym.agents.report import read_metrics
    from envgym.agents.trainer import train

    train(_config("timeseries_artist_cpu.toml", tmp_path / "r", None, 3), eval_at_start=False)
    metrics = read_metrics(tmp_path / "r/metrics.jsonl")
    assert all(m["hierarchical/single_controller_groups"] == 0 for m in metrics)
    assert max(m["hierarchical/reasoner_trained_fraction"] for m in metrics) > 0
    compared = 0
    for s in (1, 2, 3):
        trajs = _step_trajectories(tmp_path / "r", s)
        for q in {t.group_id for t in trajs}:
            heads = [t for t in trajs if t.group_id == q and t.meta["sample"] == 0
                     and t.meta["credit"] is not None]
            scored = sorted((sum(role_reward(x, "controller") for x in t.turns),
                             t.meta["credit"]["advantages"][0][0]) for t in heads
                            if t.meta["credit"]["advantages"][0])
            if len(scored) >= 2 and scored[-1][0] > scored[0][0] + 1e-6:
                assert scored[-1][1] > scored[0][1]  # best controller rollout > worst
                compared += 1
    assert compared > 0

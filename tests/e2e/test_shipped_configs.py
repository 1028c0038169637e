"""One training step of every shipped config on CPU, with 0 failed episodes.

GPU configs run as a scaled-down copy: the session's very small model on the hf backend in
fp32, one step, two tasks — the same environments, environment options and estimator
chain. About 15 s for all of them on 2 idle cores, so it runs in the default suite."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "agents" / "configs").glob("*.toml"))


def scaled(path: Path, model: Path, out: Path):
    """The config at `path`, scaled to one CPU step of the small model."""
    from envgym.agents.config import load_config

    cfg = load_config(path)
    cfg.output_dir, cfg.steps, cfg.checkpoint_every, cfg.eval_every = out, 1, 0, 0
    m = cfg.model
    m.policy, m.backend, m.dtype, m.device, m.warm_start = str(model), "hf", "float32", "cpu", "none"
    m.gradient_checkpointing, m.strategy, m.lora_rank = False, "auto", 0
    r = cfg.rollout
    r.tasks_per_step, r.eval_episodes, r.max_tokens = 2, 1, 8
    r.group_size = min(r.group_size, 2)
    r.reasoner_samples = min(r.reasoner_samples, 2)
    cfg.ppo.minibatches, cfg.optim.grad_accum = 1, 1
    cfg.log.tensorboard, cfg.log.wandb, cfg.log.progress = False, False, False
    return cfg


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_shipped_config_trains_one_step_without_failed_episodes(path, tmp_path, small_model):
    from envgym.agents.report import read_metrics
    from envgym.agents.trainer import train

    train(scaled(path, small_model, tmp_path / "run"), eval_at_start=False)
    step = read_metrics(tmp_path / "run/metrics.jsonl")[-1]
    assert step["step"] == 1 and step["rollout/failed"] == 0
    # `filter` may drop every zero-variance group of an untrained model; each is counted
    assert step["credit/trajectories"] > 0 or step["filter/dropped_groups"] > 0

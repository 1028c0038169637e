"""ILR through `envgym train`: metrics per trainable agent, fixed partners apart (issue 25)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from envgym.agents.config import load_config

CONFIG = Path(__file__).resolve().parents[2] / "agents" / "configs" / "debate_ilr_cpu.toml"


def _config(out: Path, model: Path, steps: int = 1):
    cfg = load_config(CONFIG)
    cfg.output_dir, cfg.steps, cfg.checkpoint_every = out, steps, 1
    cfg.model.policy, cfg.model.warm_start = str(model), "none"
    # the shipped config trains two policies; here agent_1 is a fixed partner
    cfg.agents, cfg.envs[0].agents = {}, {"agent_1": "scripted:noisy"}
    cfg.rollout.eval_episodes, cfg.rollout.deterministic = 2, True
    cfg.rollout.tasks_per_step, cfg.rollout.group_size, cfg.rollout.max_tokens = 2, 2, 8
    cfg.log.trajectories, cfg.log.progress = True, False
    return cfg


def test_trainer_logs_the_learner_alone_and_the_partner_apart(tmp_path, small_model):
    from envgym.agents.report import read_metrics
    from envgym.agents.trainer import train

    train(_config(tmp_path, small_model), eval_at_start=False)
    m = next(r for r in read_metrics(tmp_path / "metrics.jsonl") if r.get("step") == 1)
    assert "agent/agent_0/return" in m and "fixed/agent_1/return" in m
    assert "agent/agent_1/return" not in m
    assert m["reward"] == pytest.approx(m["agent/agent_0/return"])
    assert m["eval/Debate-v0/reward"] == pytest.approx(m["eval/Debate-v0/agent/agent_0/return"])
    assert "eval/Debate-v0/fixed/agent_1/return" in m
    assert np.isfinite(m["fixed/agent_1/success"])

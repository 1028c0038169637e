"""Failed episodes through the trainer: left out of credit, counted, and refused in bulk."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import envgym
from envgym.core import StepResult, TextEnv, system, user

FAIL_SEED = 10


class FailOnce(TextEnv):
    """One-turn task rewarded by the action's length; the first member of task `FAIL_SEED`
    to act crashes (like a sandbox dying), every other episode completes."""

    budget, lock = 1, threading.Lock()
    always = False

    def _reset(self, seed, options):
        self.seed_, self.task_id = seed, f"t{seed}"
        return [system("Say something."), user(f"Task {seed}.")], {}

    def _step(self, action):
        with FailOnce.lock:
            crash = FailOnce.always or (self.seed_ == FAIL_SEED and FailOnce.budget > 0)
            FailOnce.budget -= crash
        if crash:
            raise ConnectionError("sandbox died")
        score = len(action) / 40
        return StepResult([], {"len": score}, terminated=True,
                          info={"outcome": {"success": score > 0.5, "score": score}})


envgym.register("test/FailOnce-v0", FailOnce)


def _config(tmp_path, tiny_dir, **rollout):
    from envgym.agents.config import load_config
    return load_config({
        "seed": 1, "output_dir": str(tmp_path / "run"), "steps": 1, "checkpoint_every": 0,
        "model": {"policy": str(tiny_dir)},
        "envs": [{"id": "test/FailOnce-v0", "train_seeds": [FAIL_SEED, 100],
                  "eval_seeds": [1000, 1002]}],
        "rollout": {"group_size": 4, "tasks_per_step": 2, "max_turns": 1, "max_tokens": 12,
                    "eval_episodes": 2, **rollout},
        "log": {"tensorboard": False, "progress": False}})


def test_a_failed_member_leaves_its_group_before_credit(tmp_path, tiny_dir, monkeypatch):
    import envgym.agents.trainer as trainer
    from envgym.agents.credit import compute_credit

    FailOnce.budget, FailOnce.always = 1, False
    rolled, credited = [], []
    real_rollout, real_credit = trainer.rollout, trainer.compute_credit

    def spy_rollout(*args, **kwargs):
        out = real_rollout(*args, **kwargs)
        rolled.append(out)
        return out

    def spy_credit(trajs, *args, **kwargs):
        batch = real_credit(trajs, *args, **kwargs)
        credited.append(batch)
        return batch

    monkeypatch.setattr(trainer, "rollout", spy_rollout)
    monkeypatch.setattr(trainer, "compute_credit", spy_credit)
    cfg = _config(tmp_path, tiny_dir)
    cfg.log.trajectories = True
    trainer.train(cfg, eval_at_start=False)

    raw = rolled[0]  # the step's rollouts, as the engine returned them
    failed = [t for t in raw if t.error]
    assert len(raw) == 8 and len(failed) == 1 and failed[0].seed == FAIL_SEED
    batch = credited[0]
    assert len(batch.trajectories) == 7 and all(t.error is None for t in batch.trajectories)
    # the three survivors of the failed member's group get what that group alone would get
    group = [t for t in raw if t.seed == FAIL_SEED and not t.error]
    alone = compute_credit(group, ["grpo"])
    got = [batch.advantages[batch.trajectories.index(t)] for t in group]
    for mine, ref in zip(got, alone.advantages):
        assert np.allclose(mine[0], ref[0][0]) and mine[0].size == ref[0].size
    # ... which differs from scoring the failure as a zero-reward member
    with_zero = compute_credit(group + failed, ["grpo"])
    assert not np.allclose([a[0][0] for a in got], [a[0][0] for a in with_zero.advantages[:3]])
    assert len({round(float(a[0][0]), 6) for a in got}) > 1  # the survivors' rewards differ
    logged = [json.loads(x) for x in (tmp_path / "run/metrics.jsonl").read_text().splitlines()]
    step = next(r for r in logged if r["step"] == 1)
    assert step["rollout/failed"] == 1.0 and step["credit/trajectories"] == 7.0
    # the step log has every trajectory, the failed one with its error and no credit
    records = [json.loads(x) for x in
               (tmp_path / "run/trajectories/step_000001.jsonl").read_text().splitlines()]
    assert len(records) == 8
    bad = [r for r in records if r["error"]]
    assert len(bad) == 1 and "sandbox died" in bad[0]["error"] and bad[0]["meta"]["credit"] is None


def test_a_step_with_too_many_failures_is_refused(tmp_path, tiny_dir):
    from envgym.agents.trainer import RolloutFailed, train

    FailOnce.always = True
    try:
        with pytest.raises(RolloutFailed, match=r"8 of 8 rollouts failed.*sandbox died"):
            train(_config(tmp_path, tiny_dir), eval_at_start=False)
    finally:
        FailOnce.always = False
    assert not (tmp_path / "run/final").exists()


def test_the_failure_threshold_is_validated(tmp_path, tiny_dir):
    from envgym.errors import InvalidConfig
    with pytest.raises(InvalidConfig, match="rollout.max_failed_fraction"):
        _config(tmp_path, tiny_dir, max_failed_fraction=1.0)
    assert _config(tmp_path, tiny_dir, max_failed_fraction=0.5).rollout.max_failed_fraction == 0.5

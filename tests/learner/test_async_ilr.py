"""Asynchronous ILR (issue 40): two policies, one version stream each.

The shipped `debate_ilr_cpu.toml` (Debate-v0, `[agents.agent_0]` and `[agents.agent_1]`,
`calibrated` + `grpo`) scaled to a few CPU steps of a very small model, both agents starting
from it and trained at different learning rates, so their versions part after update 1."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from envgym.agents.async_rollouts import VERSIONS, bound_staleness, staleness_metrics
from envgym.agents.config import TrainConfig, load_config
from envgym.trajectory import Trajectory, Turn, read_trajectories

from .async_fixture import small_model, step_digests

CONFIG = Path(__file__).resolve().parents[2] / "agents" / "configs" / "debate_ilr_cpu.toml"
AGENTS = ("agent_0", "agent_1")


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return small_model(tmp_path_factory.mktemp("ilr") / "m")


def _ilr(model: Path, out: Path, steps: int = 3, **rollout) -> TrainConfig:
    """Two tasks of two rollouts a step, 8 tokens a turn; every checkpoint kept (they hold
    each agent's version for the log-prob check)."""
    cfg = load_config(CONFIG)
    cfg.output_dir, cfg.steps, cfg.checkpoint_every, cfg.keep_checkpoints = out, steps, 1, steps
    cfg.model.warm_start = "none"
    for name, lr in zip(AGENTS, (1e-2, 1e-3)):
        cfg.agents[name].model = {"policy": str(model), "warm_start": "none"}
        cfg.agents[name].lr = lr
    r = cfg.rollout
    r.eval_episodes, r.deterministic, r.tasks_per_step, r.group_size = 2, True, 2, 2
    r.max_tokens = 8
    for key, value in rollout.items():
        setattr(r, key, value)
    cfg.ppo.entropy_coef = 0.05  # an untrained model's debates score alike: moves the weights
    cfg.log.progress, cfg.log.tensorboard, cfg.log.trajectories = False, False, True
    return TrainConfig.model_validate(cfg.model_dump(mode="json"))  # validated again


def _steps(out: Path, step: int) -> list[Trajectory]:
    return list(read_trajectories(out / "trajectories" / f"step_{step:06d}.jsonl"))


def _metrics(out: Path) -> list[dict]:
    from envgym.agents.report import read_metrics

    return [m for m in read_metrics(out / "metrics.jsonl") if m.get("step", 0) >= 1]


# ---- the bound per agent (no model) -----------------------------------------------------------

def _traj(agent: str, versions: list[int]) -> Trajectory:
    return Trajectory(env_id="t", agent_id=agent, turns=[Turn() for _ in versions],
                      meta={VERSIONS: versions})


def test_each_trajectory_is_measured_against_its_own_agents_learner():
    a, b, fixed = _traj("agent_0", [3, 3]), _traj("agent_1", [2, 2]), _traj("judge", [3])
    # agent_1's learner is a version behind agent_0's: both are one version stale
    kept, masked, dropped = bound_staleness([a, b, fixed], {"agent_0": 4, "agent_1": 3}, 1,
                                            "drop")
    assert kept == [a, b, fixed] and masked == {} and dropped == 0
    # one learner clock for both would find agent_1's turns two versions old
    kept, _, dropped = bound_staleness([a, b, fixed], {"agent_0": 4, "agent_1": 4}, 1, "drop")
    assert kept == [a, fixed] and dropped == 1
    metrics, values = staleness_metrics([a, b], {"agent_0": 4, "agent_1": 4}, 2)
    assert sorted(values) == [1, 1, 2, 2]
    assert metrics["async/agent/agent_0/staleness_max"] == 1.0
    assert metrics["async/agent/agent_1/staleness_max"] == 2.0
    assert metrics["async/staleness/2"] == 0.5


# ---- through the trainer ------------------------------------------------------------------------

def test_ilr_two_policies_train_one_version_behind_each_on_its_own_stream(model, tmp_path):
    """Step sync at staleness 1: step s is sampled by each agent's version s-2 (0 at first),
    the bound holds per agent, advantages are finite, and each agent's turns carry the
    behaviour log-probs of its *own* version (checked against both agents' weights)."""
    from envgym.agents.trainer import train

    out = tmp_path / "run"
    train(_ilr(model, out, max_staleness=1), eval_at_start=False)
    records = _metrics(out)
    assert [r["step"] for r in records] == [1, 2, 3]
    for r in records:
        for name in AGENTS:
            assert r[f"async/agent/{name}/staleness_max"] == (0.0 if r["step"] == 1 else 1.0)
            assert math.isfinite(r[f"agent/{name}/async/mismatch_kl"])
            assert math.isfinite(r[f"agent/{name}/loss"])
        assert r["async/dropped_stale"] == 0.0
    for step in (1, 2, 3):
        trajs = _steps(out, step)
        assert {t.agent_id for t in trajs} == set(AGENTS)
        for t in trajs:
            assert t.meta[VERSIONS] == [max(0, step - 2)] * len(t.turns)
            if t.meta["credit"] is not None:
                adv = [a for turn in t.meta["credit"]["advantages"] for a in turn]
                assert adv and all(math.isfinite(a) for a in adv)
    # step 3 was sampled by version 1: each agent's engine had its own agent's weights
    versions = torch.load(out / "checkpoints/step_0000001/state.pt",
                          weights_only=False)["agents"]
    third = _steps(out, 3)
    for name in AGENTS:
        own = [t for t in third if t.agent_id == name]
        errors = {other: _logprob_error(model, versions[other]["model"], own)
                  for other in AGENTS}
        partner = next(a for a in AGENTS if a != name)
        assert errors[name] < 1e-3 and errors[partner] > 10 * errors[name], errors


def _logprob_error(model: Path, weights: dict, trajs: list[Trajectory]) -> float:
    """Largest |recorded behaviour log-prob - log-prob under `weights`| over the action
    tokens of `trajs`."""
    from transformers import AutoModelForCausalLM

    from envgym.agents.learner import build_batch, token_logprobs

    net = AutoModelForCausalLM.from_pretrained(model)
    net.load_state_dict(weights)
    net.eval()
    batch = build_batch(trajs, [[np.zeros(len(x.action_token_ids)) for x in t.turns]
                                for t in trajs])
    with torch.no_grad():
        logp, _ = token_logprobs(net, batch)
    return float(((logp - batch.sample_logprobs).abs() * batch.loss_mask).max())


def test_ilr_turn_sync_keeps_each_agents_turns_inside_its_own_bound(model, tmp_path):
    from envgym.agents.trainer import train

    out = tmp_path / "run"
    train(_ilr(model, out, max_staleness=1, weight_sync="turn"), eval_at_start=False)
    for r in _metrics(out):
        for name in AGENTS:
            assert r[f"async/agent/{name}/staleness_max"] <= 1.0
    for step in (2, 3):
        for t in _steps(out, step):
            versions = t.meta[VERSIONS]
            assert versions == sorted(versions)  # a later turn never has an older policy
            assert all(step - 2 <= v <= step - 1 for v in versions)


def test_ilr_staleness_zero_writes_the_step_files_of_the_loop_before_async(model, tmp_path):
    """`max_staleness = 0` with two policies is the synchronous loop as it was (the frozen
    copy in sync_reference.py) bit for bit."""
    from envgym.agents.trainer import train

    from .sync_reference import train as loop_before_async

    loop_before_async(_ilr(model, tmp_path / "before"), eval_at_start=False)
    train(_ilr(model, tmp_path / "now", max_staleness=0), eval_at_start=False)
    before = step_digests(tmp_path / "before")
    assert len(before) == 3
    assert step_digests(tmp_path / "now") == before


def test_killed_ilr_async_run_resumes_exactly(model, tmp_path):
    """Both agents' in-flight step (3) is checkpointed after step 2; a resume from there
    writes steps 3-4 and both final models as the uninterrupted run did."""
    import shutil

    from envgym.agents.trainer import train

    out = tmp_path / "run"
    a = train(_ilr(model, out, steps=4, max_staleness=1), eval_at_start=False)
    state = torch.load(out / "checkpoints/step_0000002/state.pt", weights_only=False)
    assert [x["step"] for x in state["in_flight"]] == [3]
    uninterrupted = step_digests(out)
    for gone in ("final", "checkpoints/step_0000003", "checkpoints/step_0000004",
                 "trajectories/step_000003.jsonl", "trajectories/step_000004.jsonl"):
        p = out / gone
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    b = train(_ilr(model, out, steps=4, max_staleness=1), resume=True, eval_at_start=False)
    assert step_digests(out) == uninterrupted
    for name in AGENTS:
        sa, sb = a["models"][name].state_dict(), b["models"][name].state_dict()
        assert all(torch.equal(sa[k], sb[k]) for k in sa)

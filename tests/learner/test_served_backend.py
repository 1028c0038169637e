"""`model.backend = "server"`: rollouts from `serve-policy` in a child process, its weights
synced through `/v1/load_weights` (issue 40: serve-policy through its weight sync)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from envgym.agents.async_rollouts import VERSIONS
from envgym.agents.config import load_config
from envgym.agents.learner import build_batch, token_logprobs
from envgym.errors import PolicyError
from envgym.trajectory import read_trajectories

from .async_fixture import small_model, tiny_config


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return small_model(tmp_path_factory.mktemp("served") / "m")


@pytest.fixture
def pushed(monkeypatch) -> list[dict[str, torch.Tensor]]:
    """Every state dict the trainer pushes to the server, in order (version 0, 1, ...)."""
    from envgym.agents.policies import server_weights

    seen: list[dict[str, torch.Tensor]] = []
    save = server_weights.save_weights

    def spy(state, folder, model=None):
        seen.append({k: v.detach().clone() for k, v in state.items()})
        return save(state, folder, model)

    monkeypatch.setattr(server_weights, "save_weights", spy)
    return seen


def _train(model: Path, out: Path, steps: int, **rollout):
    from envgym.agents.trainer import train

    cfg = tiny_config(model, out, **rollout)
    cfg.update(steps=steps, optim={"lr": 0.3})  # updates that move the log-probs visibly
    cfg["model"] = {**cfg["model"], "backend": "server"}
    return train(load_config(cfg), eval_at_start=False)


def _trajs(out: Path, step: int):
    return list(read_trajectories(out / "trajectories" / f"step_{step:06d}.jsonl"))


def _learner_logprobs(model_dir: Path, state: dict[str, torch.Tensor], trajs) -> tuple:
    """(the recorded behaviour log-probs, the learner's own of the same tokens) at `state`."""
    from transformers import AutoModelForCausalLM

    lm = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    lm.load_state_dict(state, strict=False)
    lm.eval()
    batch = build_batch(trajs)
    with torch.no_grad():
        own, _ = token_logprobs(lm, batch)
    on = batch.loss_mask.bool()
    return batch.sample_logprobs[on], own[on]


def test_server_backend_trains_and_records_the_servers_behaviour_logprobs(model, tmp_path,
                                                                          pushed):
    out = tmp_path / "run"
    result = _train(model, out, steps=2)
    assert len(pushed) == 3  # the start (version 0), then after updates 1 and 2
    assert any(not torch.equal(pushed[0][k], pushed[1][k]) for k in pushed[0])  # it moved
    for step in (1, 2):
        trajs = _trajs(out, step)
        assert trajs and all(t.policy.startswith("server:") for t in trajs)
        recorded, own = _learner_logprobs(model, pushed[step - 1], trajs)
        assert recorded.numel() > 0
        torch.testing.assert_close(recorded, own, atol=1e-4, rtol=0)
    _, stale = _learner_logprobs(model, pushed[0], trajs)  # step 2 under the weights
    assert (stale - recorded).abs().max() > 1e-2  # before the sync: the load took effect
    served = result["policy"]
    assert served.proc.poll() is not None  # the child ended with the run


def test_server_backend_under_staleness_one_stays_within_the_bound(model, tmp_path, pushed):
    import json

    out = tmp_path / "run"
    _train(model, out, steps=3, max_staleness=1)
    for step in (1, 2, 3):
        trajs = _trajs(out, step)
        assert trajs and all(t.policy.startswith("server:") for t in trajs)
        for t in trajs:
            assert t.meta[VERSIONS] == [max(0, step - 2)] * len(t.turns)
            assert all(turn.action_logprobs for turn in t.turns if turn.action_token_ids)
        for row in (json.loads(x) for x in
                    (out / "trajectories" / f"step_{step:06d}.jsonl").read_text().splitlines()):
            advantages = [a for turn in row["meta"]["credit"]["advantages"] for a in turn]
            assert advantages and all(math.isfinite(a) for a in advantages)
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["async/staleness_max"] for r in records] == [0.0, 1.0, 1.0]
    assert all(math.isfinite(r["async/mismatch_kl"]) for r in records)
    # versions 0, 1, 2 were loaded by the rollout thread; 0 also at the start
    assert len(pushed) >= 3


def test_a_dead_policy_server_is_an_error_naming_it(model, tmp_path):
    from envgym.agents.policies.served import ServedPolicy
    from envgym.policy import SamplingParams

    with ServedPolicy(str(model), tmp_path / "srv") as served:
        served.proc.kill()
        served.proc.wait()
        with pytest.raises(PolicyError, match="has exited"):
            served.generate([[1, 2, 3]], SamplingParams(max_tokens=2))


def test_greedy_evaluation_through_the_server_equals_the_hf_backends(model, tmp_path):
    """At the same seed the backends' greedy turns agree token for token (sampled ones do
    not: serve-policy seeds each chunk of a row on its own, `policies/served.py`)."""
    from envgym.agents.policies.hf import HFPolicy
    from envgym.agents.policies.served import ServedPolicy
    from envgym.agents.trainer import evaluate

    cfg = load_config(tiny_config(model, tmp_path / "run"))
    local = evaluate(HFPolicy(str(model), seed=cfg.seed), cfg, 0, tmp_path / "hf")
    with ServedPolicy(str(model), tmp_path / "srv", chunk_tokens=6) as served:
        remote = evaluate(served, cfg, 0, tmp_path / "server")
    assert local["eval/reward"] == remote["eval/reward"]
    a = list(read_trajectories(tmp_path / "hf" / "eval_TimeSeries-v0_step0.jsonl"))
    b = list(read_trajectories(tmp_path / "server" / "eval_TimeSeries-v0_step0.jsonl"))
    assert len(a) == len(b) == 2
    for x, y in zip(a, b):
        assert [t.action_token_ids for t in x.turns] == [t.action_token_ids for t in y.turns]
        for s, t in zip(x.turns, y.turns):
            assert s.action_logprobs == pytest.approx(t.action_logprobs, abs=1e-4)

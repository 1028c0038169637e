"""ARTIST's per-role temperatures (controller 1.0, reasoner 0.7): each turn records the
temperature it was sampled at, and the learner's log-probs are of that distribution."""

from __future__ import annotations

import pytest
import torch
from envgym.agents.learner import build_batch, token_logprobs

from envgym.hierarchy import collect_hierarchical
from envgym.policy import SamplingParams

ANSWER_DUE = ("Zooming stopped", "Now answer")

ENV = "envgym/TimeSeries-v0"
KW = {"series_length": 512, "sketch_points": 8, "zoom_points": 16, "max_rounds": 3,
      "tool_format": "tag", "max_turns": 8}


def _rollout(policy, ctrl=1.0, reas=0.7, temperature=1.0):
    return collect_hierarchical(ENV, policy, episodes=3, controllers=2, samples=3, env_kwargs=KW,
                                sampling=SamplingParams(max_tokens=12, seed=5,
                                                        temperature=temperature),
                                controller_temperature=ctrl, reasoner_temperature=reas,
                                concurrency=1)


def _learner_logprobs(policy, trajs, default):
    batch = build_batch(trajs, pad_id=policy.inner.pad_id)
    with torch.no_grad():
        logp, _ = token_logprobs(policy.model, batch, default)
    return batch, logp


def _per_role_error(trajs, batch, logp):
    """Max |stored sampling log-prob - learner's| over each role's action tokens."""
    err = {"controller": 0.0, "reasoner": 0.0}
    for i, t in enumerate(trajs):
        at = 0
        for turn in t.turns:
            at += len(turn.obs_token_ids)
            n = len(turn.action_token_ids)
            if n:
                diff = (logp[i, at:at + n] - torch.tensor(turn.action_logprobs)).abs().max()
                err[turn.role] = max(err[turn.role], float(diff))
            at += n
    return err


def test_each_role_samples_at_its_temperature_and_the_learner_scores_it_there(steered):
    policy = steered(controller_temperature=1.0)
    trajs = _rollout(policy)
    forks = [t for t in trajs if t.meta["sample"] > 0]
    assert forks and all(t.turns[-1].temperature == 0.7 for t in forks)
    assert all(x.temperature == 1.0 for t in trajs for x in t.turns[:t.meta["fork_turn"]])
    # the engine's own answer when one was due (after ACCEPT or the last round) was redrawn
    # at the reasoner's temperature; a direct answer (the controller's decision) keeps 1.0
    heads = [t for t in trajs if t.meta["sample"] == 0 and "accuracy" in t.turns[-1].info]
    due = [h for h in heads if any(m in str(h.turns[-1].observation) for m in ANSWER_DUE)]
    direct = [h for h in heads if h not in due]
    assert due and direct
    assert all(h.turns[-1].temperature == 0.7 for h in due)
    assert all(h.turns[-1].temperature == 1.0 for h in direct)
    assert policy.rows_by_temperature.get(0.7, 0) == len(forks) + len(due)
    # the learner's default is neither role's: only the recorded temperatures can match
    batch, logp = _learner_logprobs(policy, trajs, default=0.3)
    err = _per_role_error(trajs, batch, logp)
    assert err["controller"] < 1e-5 and err["reasoner"] < 1e-5, err
    # and the check has teeth: one temperature for every token misses the reasoner's
    batch.temperatures = None
    with torch.no_grad():
        flat, _ = token_logprobs(policy.model, batch, 1.0)
    assert _per_role_error(trajs, batch, flat)["reasoner"] > 1e-2


def test_one_temperature_for_both_roles_keeps_the_engine_answer(steered):
    policy = steered(controller_temperature=0.9)
    trajs = _rollout(policy, ctrl=None, reas=None, temperature=0.9)  # both: sampling's
    assert {x.temperature for t in trajs for x in t.turns} == {0.9}
    assert set(policy.rows_by_temperature) == {0.9}  # no answer was redrawn


def test_role_temperatures_need_the_hierarchical_credit():
    from envgym.agents.config import TrainConfig

    base = {"envs": [{"id": ENV}], "credit": ["grpo"], "rollout": {"reasoner_temperature": 0.7}}
    with pytest.raises(ValueError, match="hierarchical"):
        TrainConfig.model_validate(base)


def test_the_shipped_artist_configs_sample_the_roles_at_artist_temperatures():
    from pathlib import Path

    from envgym.agents.config import load_config
    root = Path(__file__).resolve().parents[2] / "agents" / "configs"
    for name in ("timeseries_artist_cpu.toml", "timeseries_qwen05b.toml"):
        r = load_config(root / name).rollout
        assert (r.controller_temperature, r.reasoner_temperature) == (1.0, 0.7)

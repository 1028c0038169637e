"""Rows whose loss is exactly zero (a GRPO group that all got the same reward) skip the
backward (`agents/update.py`, issue 41): the update's numbers stay those of the full update."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import envgym.agents.update as update
from envgym.agents.config import load_config
from envgym.agents.learner import LogprobModel, build_batch
from envgym.agents.update import ppo_update, zero_signal_rows


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from envgym.agents.policies.hf import HFPolicy
    from envgym.agents.tiny import build_tiny_model
    torch.set_num_threads(1)
    path = build_tiny_model(tmp_path_factory.mktemp("zero"), include_envs=False,
                            hidden_size=64, layers=2, heads=4, kv_heads=2)
    return HFPolicy(str(path), device="cpu")


@pytest.fixture(scope="module")
def trajs(tiny):
    """Two groups of two multi-turn episodes the engine rolled out."""
    from envgym.policy import SamplingParams
    from envgym.rollout import collect
    out = collect("envgym/TimeSeries-v0", tiny, episodes=2, group_size=2, seed=3, max_turns=2,
                  sampling=SamplingParams(max_tokens=16, seed=11))
    assert all(t.error is None for t in out)
    return out


class _Grads:
    """Records each optimiser step's gradients (None stays None), then steps AdamW."""

    def __init__(self, model):
        self.params, self.grads = list(model.parameters()), []
        self.adamw = torch.optim.AdamW(self.params, lr=1e-2)

    def step(self):
        self.grads.append([None if p.grad is None else p.grad.clone() for p in self.params])
        self.adamw.step()

    def zero_grad(self, set_to_none=True):
        self.adamw.zero_grad(set_to_none=set_to_none)


def _advantages(trajs, signal):
    """Advantages: random for trajectories in `signal`, exactly 0 for the rest."""
    rng = np.random.default_rng(0)
    return [[rng.normal(size=len(x.action_token_ids)) * (i in signal) for x in t.turns]
            for i, t in enumerate(trajs)]


def _run(tiny, trajs, tmp_path, monkeypatch, skip, adv_steps, ppo, model=None):
    """`ppo_update` once per advantage list in `adv_steps` (one AdamW carried across them);
    returns the stats, the recorded gradients, the final model and how many tokens went
    through a forward with grad."""
    monkeypatch.setattr(update, "SKIP_ZERO_SIGNAL", skip)
    cfg = load_config({"output_dir": str(tmp_path), "envs": [{"id": "envgym/TimeSeries-v0"}],
                       "optim": {"max_grad_norm": 1e9}, "ppo": ppo})
    model = copy.deepcopy(model if model is not None else tiny.model).train()
    graded = [0]

    def count(_module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if torch.is_grad_enabled() and ids is not None:
            graded[0] += int(ids.numel())
    hook = model.model.register_forward_pre_hook(count, with_kwargs=True)
    opt, stats = _Grads(model), []
    for adv in adv_steps:
        batch = build_batch(trajs, adv, pad_id=0)
        stats.append(ppo_update(LogprobModel(model), None, opt, batch, cfg, cfg.ppo.loss_agg
                                if cfg.ppo.loss_agg != "auto" else "token_mean",
                                torch.Generator().manual_seed(5)))
    hook.remove()
    return stats, opt.grads, model, graded[0]


@pytest.mark.parametrize("ppo", [
    {"epochs": 1, "minibatches": 1},
    {"epochs": 2, "minibatches": 2, "max_tokens_per_microbatch": 0},
    {"epochs": 1, "minibatches": 1, "loss_agg": "seq_mean", "ratio": "sequence"},
], ids=["one-pass-packed", "recomputed-old-padded", "seq_mean-sequence-ratio"])
def test_skipping_zero_signal_rows_changes_no_number(tiny, trajs, tmp_path, monkeypatch, ppo):
    steps = [_advantages(trajs, signal={0, 1})]  # the second group got one reward for all
    full, g_full, m_full, n_full = _run(tiny, trajs, tmp_path, monkeypatch, False, steps, ppo)
    fast, g_fast, m_fast, n_fast = _run(tiny, trajs, tmp_path, monkeypatch, True, steps, ppo)
    assert n_fast < n_full  # the zero rows ran no forward with grad
    for k in full[0]:
        assert fast[0][k] == pytest.approx(full[0][k], abs=1e-6), k
    assert full[0]["loss"] != 0.0 and full[0]["entropy"] > 0 and full[0]["logprob_drift"] > 0
    for a, b in zip(g_full, g_fast):
        for x, y in zip(a, b):
            torch.testing.assert_close(y, x, atol=1e-6, rtol=0)
    assert any(float(x.abs().max()) > 1e-3 for x in g_full[0])


def test_a_step_without_signal_still_steps_adamw_on_zero_gradients(tiny, trajs, tmp_path,
                                                                   monkeypatch):
    """After a step with signal, a step without any: AdamW's momentum still moves the
    weights, as it did on the zero gradients a backward gave; no forward needs grad."""
    steps = [_advantages(trajs, signal={0, 1, 2, 3}), _advantages(trajs, signal=set())]
    ppo = {"epochs": 1, "minibatches": 1}
    full, g_full, m_full, n_full = _run(tiny, trajs, tmp_path, monkeypatch, False, steps, ppo)
    fast, g_fast, m_fast, n_fast = _run(tiny, trajs, tmp_path, monkeypatch, True, steps, ppo)
    assert all(g is not None and not g.any() for g in g_fast[1])  # zeros, not None
    assert n_fast == n_full // 2  # the first step's forward only
    assert fast[1]["loss"] == full[1]["loss"] == 0.0
    assert fast[1]["entropy"] == pytest.approx(full[1]["entropy"], abs=1e-6)
    moved = [float((p - q).detach().abs().max()) for p, q in
             zip(m_full.parameters(), tiny.model.parameters())]
    assert max(moved) > 1e-3
    for p, q in zip(m_full.parameters(), m_fast.parameters()):
        torch.testing.assert_close(q, p, atol=1e-6, rtol=0)


def test_nothing_is_skipped_where_a_zero_advantage_row_still_has_a_loss(tiny, trajs, tmp_path):
    batch = build_batch(trajs, _advantages(trajs, signal={0, 1}), pad_id=0)
    base = {"output_dir": str(tmp_path), "envs": [{"id": "envgym/TimeSeries-v0"}]}
    plain = load_config(base)
    assert zero_signal_rows(tiny.model, None, batch, plain).tolist() == [False, False, True, True]
    for extra in ({"ppo": {"entropy_coef": 0.01}},
                  {"rollout": {"max_staleness": 1}}):
        assert zero_signal_rows(tiny.model, None, batch, load_config({**base, **extra})) is None
    kl = load_config({**base, "ppo": {"kl_coef": 0.1}})
    assert zero_signal_rows(tiny.model, tiny.model, batch, kl) is None
    assert zero_signal_rows(tiny.model, None, batch, kl) is not None  # no reference: no KL
    dropout = copy.deepcopy(tiny.model)
    dropout.config.attention_dropout = 0.1
    assert zero_signal_rows(dropout, None, batch, plain) is None

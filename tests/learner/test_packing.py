"""Padding-free packed update micro-batches (issue 41): the packed update equals the padded
one on real engine trajectories, for every loss aggregation."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from envgym.agents.config import load_config
from envgym.agents.learner import LogprobModel, build_batch, token_logprobs
from envgym.agents.packing import (PACKED_ATTENTION, budget_groups, micro_batches, pack_rows,
                                   use_packed_attention)
from envgym.agents.update import ppo_update


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from envgym.agents.tiny import build_tiny_model
    torch.set_num_threads(1)
    path = build_tiny_model(tmp_path_factory.mktemp("pack"), include_envs=False,
                            hidden_size=64, layers=2, heads=4, kv_heads=2)
    from envgym.agents.policies.hf import HFPolicy
    return HFPolicy(str(path), device="cpu")


@pytest.fixture(scope="module")
def trajs(tiny):
    """Multi-turn episodes the engine rolled out with the tiny model: uneven lengths."""
    from envgym.policy import SamplingParams
    from envgym.rollout import collect
    out = collect("envgym/TimeSeries-v0", tiny, episodes=2, group_size=2, seed=3, max_turns=3,
                  sampling=SamplingParams(max_tokens=24, seed=11))
    assert all(t.error is None for t in out)
    lengths = {sum(len(x.obs_token_ids) + len(x.action_token_ids) for x in t.turns) for t in out}
    assert len(lengths) > 1  # padding would matter
    return out


def test_budget_groups_respect_the_budget_and_keep_every_row_once():
    lengths = [5, 9, 3, 12, 7, 1, 30]
    groups = budget_groups(lengths, 12)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    for g in groups:
        assert sum(lengths[i] for i in g) <= 12 or len(g) == 1  # 30 runs alone
    assert [6] in groups
    assert len(groups) == 5  # first-fit decreasing: 30 | 12 | 9+3 | 7+5 | 1 joins one of them
    with pytest.raises(ValueError, match="positive"):
        budget_groups(lengths, 0)


def test_micro_batches_split_grad_accum_parts_then_pack():
    rows = torch.tensor([4, 0, 3, 1, 2])
    lengths = torch.tensor([10, 10, 10, 10, 10])
    micro = micro_batches(rows, lengths, 20, 2)
    assert [m.tolist() for m in micro] == [[4, 0], [3], [1, 2]]
    assert [m.tolist() for m in micro_batches(rows, lengths, 0, 2)] == [[4, 0, 3], [1, 2]]


def test_pack_rows_lays_real_tokens_end_to_end_with_positions_reset():
    ids = torch.tensor([[7, 8, 9, 0], [0, 0, 5, 6], [0, 0, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 0]])
    p = pack_rows(ids, mask)
    assert p.input_ids.tolist() == [[7, 8, 9, 5, 6]]
    assert p.position_ids.tolist() == [[0, 1, 2, 0, 1]]
    assert p.cu_seqlens.tolist() == [0, 3, 5] and p.max_len == 3
    assert p.index.tolist() == [[0, 1, 2, -1], [-1, -1, 3, 4], [-1, -1, -1, -1]]


def test_rows_store_only_what_follows_a_prefix_shared_with_an_earlier_row():
    head = list(range(1, 21))  # 20 tokens: above MIN_SHARED
    rows = [head + [30, 31], head + [40], head[:10] + [50], head + [30, 31, 32]]
    width = max(map(len, rows)) + 1
    ids = torch.tensor([r + [0] * (width - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
    p = pack_rows(ids, mask, share_prefixes=True)
    # row 0 whole (22), row 1 its tail (1), row 2 whole (11: 10 shared < 16), row 3 (1)
    assert p.input_ids.tolist() == [head + [30, 31] + [40] + head[:10] + [50] + [32]]
    assert p.segments == [(0, 22, 0, 0), (22, 23, 0, 20), (23, 34, 0, 0), (34, 35, 0, 22)]
    assert p.position_ids[0, 22].item() == 20 and p.position_ids[0, 34].item() == 22
    assert p.index[1, :21].tolist() == list(range(20)) + [22]
    assert p.index[3, :23].tolist() == list(range(22)) + [34]


def test_sdpa_models_switch_to_the_packed_attention_and_generate_as_before(tiny, trajs):
    model = copy.deepcopy(tiny.model)
    batch = build_batch(trajs[:2], pad_id=0)
    before = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    assert use_packed_attention(model) == PACKED_ATTENTION
    after = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    assert torch.equal(before, after)  # without sequence boundaries it is plain sdpa


@pytest.mark.parametrize("impl", ["sdpa", pytest.param("eager", marks=pytest.mark.slow)])
def test_packed_logprobs_equal_padded_ones(tiny, trajs, impl):
    model = copy.deepcopy(tiny.model)
    model.set_attn_implementation(impl)
    batch = build_batch(trajs, pad_id=0)
    pad, pad_ent = token_logprobs(model, batch, with_entropy=True, at_loss_only=False)
    pk, pk_ent = token_logprobs(model, batch, with_entropy=True, at_loss_only=False, packed=True)
    real = batch.attention_mask.bool()
    assert float(real.sum()) > 0 and not torch.equal(real, torch.ones_like(real))
    if impl == "sdpa":  # the group members' prompts are stored once
        assert pack_rows(batch.input_ids, batch.attention_mask, True).input_ids.shape[1] \
            < int(real.sum()) - 100
    torch.testing.assert_close(pk, pad, atol=1e-5, rtol=0)
    torch.testing.assert_close(pk_ent, pad_ent, atol=1e-5, rtol=0)
    # a packed row that attended across its neighbour would differ by far more than this
    alone = token_logprobs(model, batch.select([1]), at_loss_only=False, packed=True)[0]
    torch.testing.assert_close(pk[1:2], alone, atol=1e-5, rtol=0)


class _Capture:
    """An optimizer stand-in that records each step's gradients (and changes nothing)."""

    def __init__(self, model):
        self.params, self.grads = list(model.parameters()), []

    def step(self):
        self.grads.append([p.grad.clone() if p.grad is not None else torch.zeros_like(p)
                           for p in self.params])

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None


def _update(tiny, trajs, tmp_path, how, budget, role_sum, kl):
    rng = np.random.default_rng(0)
    adv = [[rng.normal(size=len(x.action_token_ids)) for x in t.turns] for t in trajs]
    batch = build_batch(trajs, adv, pad_id=0)
    cfg = load_config({"output_dir": str(tmp_path), "envs": [{"id": "envgym/TimeSeries-v0"}],
                       "optim": {"max_grad_norm": 1e9, "grad_accum": 2},
                       "ppo": {"minibatches": 2, "epochs": 2,
                               "kl_coef": 0.1 if kl else 0.0, "entropy_coef": 0.01,
                               "max_tokens_per_microbatch": budget}})
    model = copy.deepcopy(tiny.model).train()
    ref = None
    if kl:
        frozen = copy.deepcopy(tiny.model).eval().requires_grad_(False)
        with torch.no_grad():
            for p in frozen.parameters():
                p.add_(0.01 * torch.randn(p.shape, generator=torch.Generator().manual_seed(1)))
        ref = LogprobModel(frozen)
    # odd turns stand for the reasoner's (`ppo.role_sum`: the update takes the role mask)
    role = build_batch(trajs, [[np.full(len(x.action_token_ids), float(k % 2))
                                for k, x in enumerate(t.turns)] for t in trajs]).advantages
    opt = _Capture(model)
    # each epoch's minibatch steps move nothing (the capture does not step), so the
    # recomputed old log-probs equal the new ones and only the packing could differ
    stats = ppo_update(LogprobModel(model), ref, opt, batch, cfg, how,
                       torch.Generator().manual_seed(5), role_mask=role if role_sum else None)
    return stats, opt.grads


@pytest.mark.parametrize("how,role_sum,kl", [("token_mean", False, True),
                                              ("seq_mean", False, False),
                                              ("token_mean", True, False)],
                         ids=["token_mean+kl", "seq_mean", "role_sum"])
def test_packed_update_equals_padded_on_engine_trajectories(tiny, trajs, tmp_path, how,
                                                            role_sum, kl):
    padded, g_pad = _update(tiny, trajs, tmp_path, how, 0, role_sum, kl)
    # a budget below the longest sequence: several packed micro-batches, one row alone
    longest = max(sum(len(x.obs_token_ids) + len(x.action_token_ids) for x in t.turns)
                  for t in trajs)
    packed, g_pk = _update(tiny, trajs, tmp_path, how, longest + 8, role_sum, kl)
    assert len(g_pad) == len(g_pk) == 4  # 2 epochs x 2 minibatches
    for k in ("loss", "entropy", "kl", "clip_frac"):
        assert packed[k] == pytest.approx(padded[k], abs=1e-6), k
    assert padded["loss"] != 0.0
    for a, b in zip(g_pad, g_pk):
        for x, y in zip(a, b):
            torch.testing.assert_close(y, x, atol=1e-6, rtol=0)
    assert any(float(x.abs().max()) > 1e-3 for x in g_pad[0])  # gradients that could differ

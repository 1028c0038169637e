"""Mixed precision that learns, log-probs in chunks at loss positions, the reference policy."""

from __future__ import annotations

import pytest
import torch

from envgym.agents.config import load_config
from envgym.agents.fsdp import parallelize
from envgym.agents.learner import (TokenBatch, load_model, make_reference, naive_token_logprobs,
                                   token_logprobs, unwrap)
from envgym.agents.update import ppo_update


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from envgym.agents.tiny import build_tiny_model
    torch.set_num_threads(1)
    return build_tiny_model(tmp_path_factory.mktemp("m"), hidden_size=48, layers=2,
                            include_envs=False)


def _cfg(model_dir, tmp_path, **model):
    return load_config({"envs": [{"id": "envgym/TimeSeries-v0"}], "output_dir": str(tmp_path),
                        "model": {"policy": str(model_dir), **model},
                        "optim": {"lr": 1e-6}, "ppo": {"kl_coef": 0.0}})


def _batch(vocab: int, rows: int = 4, width: int = 24, seed: int = 0) -> TokenBatch:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab, (rows, width), generator=g)
    attn = torch.ones(rows, width, dtype=torch.long)
    attn[1, 18:] = 0  # a right-padded row
    loss = torch.zeros(rows, width)
    loss[:, 8:14] = 1
    loss[2, 20:] = 1
    loss *= attn
    adv = torch.randn(rows, width, generator=g) * loss
    return TokenBatch(ids, attn, loss, adv, torch.zeros(rows, width))


def _one_step(cfg, model_dir, tmp_path):
    model, _, _ = load_model(cfg.model, tmp_path)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    wrapped, _ = parallelize(model, None, cfg.model)
    opt = torch.optim.AdamW(wrapped.parameters(), lr=cfg.optim.lr)
    batch = _batch(model.config.vocab_size)
    stats = ppo_update(wrapped, None, opt, batch, cfg, "token_mean", torch.Generator().manual_seed(0))
    changed = sum(int((p.detach() != before[n]).sum()) for n, p in model.named_parameters())
    total = sum(p.numel() for p in model.parameters())
    return changed / total, stats, model


def test_bf16_keeps_fp32_master_weights_so_lr_1e6_moves_every_weight(model_dir, tmp_path):
    frac16, stats16, model16 = _one_step(_cfg(model_dir, tmp_path, dtype="bfloat16"), model_dir,
                                         tmp_path)
    frac32, stats32, _ = _one_step(_cfg(model_dir, tmp_path), model_dir, tmp_path)
    assert all(p.dtype == torch.float32 for p in model16.parameters())  # master weights
    assert frac16 > 0.99 and frac32 > 0.99, (frac16, frac32)
    assert stats16["loss"] == pytest.approx(stats32["loss"], abs=2e-2)
    assert stats16["entropy"] == pytest.approx(stats32["entropy"], rel=2e-2)


def test_bf16_parameters_would_freeze_at_lr_1e6(model_dir):
    """What the master weights fix: AdamW on bf16 parameters rounds most updates away."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16)
    before = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6)
    batch = _batch(model.config.vocab_size)
    logp, _ = token_logprobs(model, batch)
    (-(logp * batch.advantages).sum()).backward()
    opt.step()
    changed = sum(int((p != b).sum()) for p, b in zip(model.parameters(), before))
    assert changed / sum(p.numel() for p in model.parameters()) < 0.2


def test_bf16_autocast_is_active_and_close_to_fp32(model_dir, tmp_path):
    model, _, _ = load_model(_cfg(model_dir, tmp_path).model, tmp_path)
    batch = _batch(model.config.vocab_size)
    fp32, _ = parallelize(model, None, _cfg(model_dir, tmp_path).model)
    bf16, _ = parallelize(model, None, _cfg(model_dir, tmp_path, dtype="bfloat16").model)
    with torch.no_grad():
        a, b = token_logprobs(fp32, batch)[0], token_logprobs(bf16, batch)[0]
    m = batch.loss_mask > 0
    diff = (a - b)[m].abs()
    assert 0 < diff.max() < 0.1  # computed in bf16 (not identical), within bf16 tolerance


@pytest.mark.parametrize("chunk", [1, 5, 1024])
def test_chunked_logprobs_equal_the_naive_full_vocabulary_ones(model_dir, tmp_path, chunk):
    cfg = _cfg(model_dir, tmp_path, logprob_chunk=chunk)
    model, _, _ = load_model(cfg.model, tmp_path)
    wrapped, _ = parallelize(model, None, cfg.model)
    batch = _batch(model.config.vocab_size)
    lp, ent = token_logprobs(wrapped, batch, temperature=0.7, with_entropy=True)
    ref_lp, ref_ent = naive_token_logprobs(model, batch, temperature=0.7)
    m = batch.loss_mask > 0
    torch.testing.assert_close(lp[m], ref_lp[m], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ent[m], ref_ent[m], atol=1e-5, rtol=1e-5)
    assert (lp[~m] == 0).all() and (ent[~m] == 0).all()  # nothing computed off the loss mask
    # and the gradients through the checkpointed chunks are the naive ones
    (lp * batch.advantages).sum().add(ent.sum()).backward()
    chunked = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    ref_lp, ref_ent = naive_token_logprobs(model, batch, temperature=0.7)
    (ref_lp * batch.advantages).sum().add((ref_ent * batch.loss_mask).sum()).backward()
    for g, p in zip(chunked, model.parameters()):
        torch.testing.assert_close(g, p.grad, atol=1e-5, rtol=1e-4)


def test_all_positions_mode_matches_naive(model_dir, tmp_path):
    model, _, _ = load_model(_cfg(model_dir, tmp_path).model, tmp_path)
    batch = _batch(model.config.vocab_size)
    with torch.no_grad():
        lp, _ = token_logprobs(model, batch, at_loss_only=False)
        ref, _ = naive_token_logprobs(model, batch)
    real = batch.attention_mask.bool()
    real[:, 0] = False
    torch.testing.assert_close(lp[real], ref[real], atol=1e-5, rtol=1e-5)


def test_reference_only_with_kl_and_in_the_compute_dtype(model_dir, tmp_path):
    cfg = _cfg(model_dir, tmp_path)
    model, _, _ = load_model(cfg.model, tmp_path)
    assert make_reference(model, cfg) is None  # kl_coef = 0: no second model at all
    cfg = cfg.model_copy(update={"ppo": cfg.ppo.model_copy(update={"kl_coef": 0.1}),
                                 "model": cfg.model.model_copy(update={"dtype": "bfloat16"})})
    ref = make_reference(model, cfg)
    params = list(unwrap(ref).parameters())
    assert all(p.dtype == torch.bfloat16 and not p.requires_grad for p in params)
    assert sum(p.numel() * p.element_size() for p in params) * 2 == \
        sum(p.numel() * p.element_size() for p in model.parameters())  # half the bytes
    batch = _batch(model.config.vocab_size)
    with torch.no_grad():
        a = token_logprobs(ref, batch)[0]
        b = naive_token_logprobs(model, batch)[0]
    m = batch.loss_mask > 0
    assert (a - b)[m].abs().max() < 0.1


def test_lora_reference_is_the_base_with_adapters_disabled(model_dir, tmp_path):
    pytest.importorskip("peft", reason="the `lora` extra is not installed "
                        "(pip install 'envgym[lora]')")
    cfg = load_config({"envs": [{"id": "envgym/TimeSeries-v0"}], "output_dir": str(tmp_path),
                       "model": {"policy": str(model_dir), "lora_rank": 4},
                       "ppo": {"kl_coef": 0.1}})
    model, _, _ = load_model(cfg.model, tmp_path)
    base_numel = sum(p.numel() for p in model.parameters())
    ref = make_reference(model, cfg)
    assert unwrap(ref) is model  # no copy
    for name, p in model.named_parameters():  # move the adapters away from the identity
        if "lora_B" in name:
            torch.nn.init.normal_(p, std=0.5)
    batch = _batch(model.config.vocab_size)
    with torch.no_grad():
        ref_lp = token_logprobs(ref, batch)[0]
        pol_lp = token_logprobs(model, batch)[0]
        base_lp = naive_token_logprobs(model.get_base_model().__class__.from_pretrained(
            model_dir), batch)[0]
    m = batch.loss_mask > 0
    torch.testing.assert_close(ref_lp[m], base_lp[m], atol=1e-5, rtol=1e-5)
    assert (pol_lp - ref_lp)[m].abs().max() > 1e-3
    assert sum(p.numel() for p in model.parameters()) == base_numel

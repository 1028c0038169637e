"""The hf backend and the tiny model: exact ids, consistent log-probs, seeds, stops."""

from __future__ import annotations

import hashlib

import pytest
import torch

from envgym.agents.policies.hf import sample_tokens, sequence_logprobs
from envgym.errors import PolicyError
from envgym.policy import SamplingParams, load_policy

CONV = [{"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is 2 + 2? Ünïcödé 中文 🙂"}]


def test_tiny_model_is_a_standard_hf_dir_and_roundtrips_unicode(tiny_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    assert 1_000_000 < sum(p.numel() for p in model.parameters()) < 10_000_000
    text = "naïve 中文 🙂 <search>q</search>\n\t∑"
    assert tok.decode(tok(text)["input_ids"]) == text
    rendered = tok.apply_chat_template(CONV, tokenize=False, add_generation_prompt=True)
    assert rendered.endswith("<|im_start|>assistant\n")
    assert tok.convert_tokens_to_ids("<|im_end|>") == tok.eos_token_id


def test_tiny_model_build_is_deterministic(tiny_dir, tmp_path):
    from envgym.agents.tiny import build_tiny_model
    again = build_tiny_model(tmp_path / "again", include_envs=False)
    for name in ("model.safetensors", "tokenizer.json"):
        digest = [hashlib.sha256((d / name).read_bytes()).hexdigest() for d in (tiny_dir, again)]
        assert digest[0] == digest[1], name


def test_logprobs_match_a_separate_forward_pass(tiny_policy):
    prompts = [tiny_policy.chat.prompt_ids(CONV), tiny_policy.chat.prompt_ids(CONV[1:])]
    assert len(prompts[0]) != len(prompts[1])  # so the batch really is left-padded
    completions = tiny_policy.generate(prompts, SamplingParams(max_tokens=24, seed=3))
    for prompt, c in zip(prompts, completions):
        assert len(c.token_ids) == len(c.logprobs) == 24 and c.finish_reason == "length"
        ids = torch.tensor([prompt + c.token_ids])
        with torch.no_grad():
            lp = sequence_logprobs(tiny_policy.model, ids, torch.ones_like(ids))[0, len(prompt):]
        assert torch.allclose(lp, torch.tensor(c.logprobs), atol=1e-3)
        assert c.text == tiny_policy.chat.decode(c.token_ids)


def test_sampling_is_seeded_and_greedy_is_deterministic(tiny_policy):
    prompt = [tiny_policy.chat.prompt_ids(CONV)]
    a = tiny_policy.generate(prompt * 2, SamplingParams(max_tokens=16, seed=7))
    b = tiny_policy.generate(prompt * 2, SamplingParams(max_tokens=16, seed=7))
    assert [c.token_ids for c in a] == [c.token_ids for c in b]
    assert a[0].token_ids != a[1].token_ids  # two rows of one batch are independent draws
    g = tiny_policy.generate(prompt * 2, SamplingParams(max_tokens=16, temperature=0))
    assert g[0].token_ids == g[1].token_ids


def test_stop_string_ends_generation_at_the_token_that_completes_it(tiny_policy):
    prompt = [tiny_policy.chat.prompt_ids(CONV)]
    free = tiny_policy.generate(prompt, SamplingParams(max_tokens=30, temperature=0))[0]
    stop = tiny_policy.chat.decode(free.token_ids[5:7])  # text the model will produce
    cut = tiny_policy.generate(prompt, SamplingParams(max_tokens=30, temperature=0,
                                                      stop=(stop,)))[0]
    assert cut.finish_reason == "stop" and stop in cut.text
    assert stop not in tiny_policy.chat.decode(cut.token_ids[:-1])
    assert cut.token_ids == free.token_ids[:len(cut.token_ids)]


def test_top_k_one_equals_greedy_and_logprobs_are_untruncated():
    logits = torch.tensor([[0.0, 2.0, 1.0], [3.0, 0.0, 0.0]])
    tokens, lps = sample_tokens(logits, SamplingParams(top_k=1), torch.Generator().manual_seed(0))
    assert tokens.tolist() == [1, 0]
    assert torch.allclose(lps, logits.log_softmax(-1)[[0, 1], [1, 0]])
    # top_p=0.5 keeps only the most likely token (p=0.665 already crosses 0.5)
    tokens, _ = sample_tokens(logits, SamplingParams(top_p=0.5), torch.Generator().manual_seed(1))
    assert tokens.tolist() == [1, 0]


def test_score_equals_logprobs_of_the_target_tokens(tiny_policy):
    chat = tiny_policy.chat
    ctx, tgt = "The answer is", " forty two"
    scores = tiny_policy.score([ctx, "x"], [tgt, " forty two"])
    ids = torch.tensor([chat.encode(ctx) + chat.encode(tgt)])
    with torch.no_grad():
        lp = sequence_logprobs(tiny_policy.model, ids, torch.ones_like(ids))[0]
    n = len(chat.encode(tgt))
    assert len(scores[0]) == n
    assert torch.allclose(torch.tensor(scores[0]), lp[-n:], atol=1e-4)
    assert scores[0] != scores[1]  # conditioning matters


def test_bad_spec_and_missing_model_raise_policy_errors(tmp_path):
    with pytest.raises(PolicyError, match="Malformed"):
        load_policy("tiny")
    with pytest.raises(PolicyError, match="Cannot load"):
        load_policy(f"hf:{tmp_path / 'nope'}")


def test_the_learners_compute_dtype_is_used_for_generation_on_gpus_only(tiny_dir):
    from envgym.agents.policies.hf import HFPolicy
    cpu = HFPolicy(str(tiny_dir), device="cpu", autocast="bfloat16")
    assert cpu.autocast is None  # CPU bf16 autocast is slower than fp32, and changes ids
    assert HFPolicy(str(tiny_dir), device="cpu", model=cpu.model, tokenizer=cpu.tokenizer,
                    autocast="float32").autocast is None


@pytest.mark.gpu
def test_fp32_master_weights_sample_in_bf16_on_a_gpu(tiny_dir):
    from envgym.agents.policies.hf import HFPolicy
    policy = HFPolicy(str(tiny_dir), device="cuda", dtype="float32", autocast="bfloat16")
    prompt = policy.chat.prompt_ids(CONV)
    out = policy.generate([prompt], SamplingParams(max_tokens=4, seed=0))[0]
    assert len(out.token_ids) == 4 or out.finish_reason == "stop"
    entry = next(iter(policy.kv.entries.values()))
    assert entry.keys[0].dtype == torch.bfloat16
    assert next(policy.model.parameters()).dtype == torch.float32


def test_generation_runs_in_inference_mode_and_samples_what_no_grad_samples(tiny_dir):
    """inference_mode (cheaper than no_grad: no version counters) changes no id or log-prob;
    the KV a call keeps is made without autograd bookkeeping (fails under plain no_grad)."""
    from envgym.agents.policies.hf import HFPolicy

    policy = HFPolicy(str(tiny_dir), device="cpu")
    prompts = [policy.chat.prompt_ids(CONV), policy.chat.prompt_ids(CONV[1:])] * 2
    rows = [SamplingParams(max_tokens=20, seed=11 + i) for i in range(len(prompts))]
    fast = policy._generate_batch([list(p) for p in prompts], rows)
    assert policy.kv.entries and all(
        t.is_inference() for e in policy.kv.entries.values() for t in (*e.keys, *e.values))
    policy.clear_cache()
    with torch.no_grad():  # the same loop without the decorator
        plain = HFPolicy._generate_batch.__wrapped__(policy, [list(p) for p in prompts], rows)
    assert [(c.token_ids, c.logprobs) for c in fast] == [(c.token_ids, c.logprobs) for c in plain]

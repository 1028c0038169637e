"""The vLLM backend's pure helpers (no engine needed): per-request seeds and weight names."""

from __future__ import annotations

import torch

from envgym.agents.policies.vllm import request_seeds, vllm_names


def test_request_seeds_are_distinct_deterministic_and_do_not_overlap_between_calls():
    a = request_seeds(7, 16)
    assert a == request_seeds(7, 16) and len(set(a)) == 16
    b = request_seeds(8, 16)  # the next call's seed: no request shares a stream with call 7
    assert not set(a) & set(b)
    assert request_seeds(None, 3) == [None, None, None]


def test_peft_names_map_to_the_base_architecture_and_adapters_are_dropped():
    w = torch.zeros(2, 2)
    names = dict(vllm_names({
        "base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight": w,
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight": w,
        "base_model.model.model.layers.0.self_attn.q_proj.lora_B.default.weight": w,
        "model.norm.weight": w}))
    assert sorted(names) == ["model.layers.0.self_attn.q_proj.weight", "model.norm.weight"]


def test_per_row_params_keep_their_own_seeds_and_settings():
    import types

    from envgym.agents.policies.vllm import VLLMPolicy
    from envgym.policy import SamplingParams

    sent = []

    class FakeLLM:
        def generate(self, requests, params, use_tqdm=False):
            sent.extend(params)
            out = types.SimpleNamespace(token_ids=[5], logprobs=[{5: types.SimpleNamespace(
                logprob=-0.5)}], finish_reason="length")
            return [types.SimpleNamespace(outputs=[out]) for _ in requests]

    policy = object.__new__(VLLMPolicy)
    policy.llm, policy.pad_id = FakeLLM(), 0
    policy._vllm = types.SimpleNamespace(SamplingParams=lambda **kw: kw)
    policy.chat = types.SimpleNamespace(eos_token_ids={2}, decode=lambda ids: "x" * len(ids))
    rows = [SamplingParams(seed=11, temperature=0.7), SamplingParams(seed=12, top_p=0.5)]
    got = policy.generate([[1, 2], [3]], rows)
    assert [p["seed"] for p in sent] == [11, 12]
    assert [p["temperature"] for p in sent] == [0.7, 1.0] and sent[1]["top_p"] == 0.5
    assert [c.token_ids for c in got] == [[5], [5]]
    sent.clear()
    policy.generate([[1], [1]], SamplingParams(seed=3))  # one params: request_seeds as before
    assert [p["seed"] for p in sent] == request_seeds(3, 2)

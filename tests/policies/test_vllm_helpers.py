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

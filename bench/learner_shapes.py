"""Model shapes and the MFU estimate for the learner benches (`learner_vs_trl.py`,
`multiturn_vs_trl.py`): the CPU tiny model, or a Qwen2.5-0.5B-shaped one for a GPU.

`qwen0.5b` has Qwen2.5-0.5B's width, depth, heads and 151,936-token vocabulary with random
weights, built here (nothing is downloaded). The bench's own small tokenizer stays: its ids
are a subset of the model's vocabulary, so rollouts, environments and both trainers run
unchanged while every matmul has the real model's cost.

MFU counts model FLOPs the usual way, 2 N per token for a forward and 6 N for a forward and
backward (N = parameters), over every token of every sequence once for the rollout and once
for the update: 8 N per sequence token per step, whatever either side recomputes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SHAPES: dict[str, dict[str, int]] = {
    "qwen0.5b": {"vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864,
                 "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2},
}
FLOPS_PER_SEQ_TOKEN = 8  # x parameters: rollout forward (2) + update forward and backward (6)


def reshape(model_dir: Path, shape: str, seed: int = 0) -> None:
    """Replace the model saved in `model_dir` by a random one of `shape` (no-op for tiny),
    keeping its tokenizer and special token ids."""
    if shape == "tiny":
        return
    import torch
    from transformers import AutoConfig, Qwen2Config, Qwen2ForCausalLM

    old = AutoConfig.from_pretrained(model_dir)
    config = Qwen2Config(**SHAPES[shape], tie_word_embeddings=True, max_position_embeddings=8192,
                         eos_token_id=old.eos_token_id, pad_token_id=old.pad_token_id,
                         bos_token_id=old.bos_token_id)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = old.eos_token_id
    model.generation_config.pad_token_id = old.pad_token_id
    model.save_pretrained(model_dir)


def parameters(model_dir: Path) -> int:
    """Parameter count of the saved model (tied embeddings once)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(model_dir))
    return sum(p.numel() for p in model.parameters())


def mfu(seq_tokens_per_s: float, n_params: int, peak_tflops: float) -> float:
    """Model FLOPs utilisation of a training loop at `seq_tokens_per_s` (see the docstring)."""
    return FLOPS_PER_SEQ_TOKEN * n_params * seq_tokens_per_s / (peak_tflops * 1e12)


def device_settings(device: str) -> dict[str, Any]:
    """envgym's `[model]` keys and TRL's `GRPOConfig` keys for `device` (bf16 on a GPU)."""
    if device == "cpu":
        return {"envgym": {}, "trl": {"use_cpu": True, "bf16": False}}
    return {"envgym": {"device": device, "dtype": "bfloat16"},
            "trl": {"use_cpu": False, "bf16": True}}

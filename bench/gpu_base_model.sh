#!/usr/bin/env bash
# Pretrain the offline base model on one CUDA device for a fixed wall budget per shape, and
# leave in $OUT what comes back: per shape the final bf16 weights (files <= 15 MB), its
# report.json (tokens/s, MFU against 989 and 790 TFLOP/s, loss curve, seed, versions) and the
# console log; then one summary JSON line on stdout (also $OUT/summary.json).
# Checkpoints (fp32 + optimizer) stay in WORK; a kill mid-run still leaves the last
# checkpoint's report and weights copied to $OUT by the EXIT trap.
#   OUT=DIR [DEVICE=cuda] [MINUTES=2.75] [SHAPES=small,base] [BATCH=256] [SEQ=512] [WORKERS=12]
#   [SEED=0] [CORPUS=4] [INIT=MODEL_DIR] [ANSWER_WEIGHT=1] bench/gpu_base_model.sh
# CORPUS=1 reproduces the shipped weights of 2026-12-04 (4, the default, holds the reading rungs:
# docs/demo.md attempt 8); INIT continues from a model's weights
# (continued pretraining) instead of a fresh initialisation; ANSWER_WEIGHT is `--answer-weight`
# (the loss weight of the assistant's answer tokens, docs/demo.md attempt 9). PROBE=1 (the default) then scores
# each model before any RL, in the same call: the skill probes against the shipped base and the
# tiny model (bench/base_model.py, list probes included) and the forced-choice reading of the
# demo's development tasks (bench/demo_diagnose.py read), into $OUT/SHAPE/{probes,read}.jsonl.
# CPU check:
#   OUT=/tmp/o DEVICE=cpu MINUTES=0.2 BATCH=8 SEQ=128 WORKERS=0 bench/gpu_base_model.sh
set -euo pipefail
: "${OUT:?set OUT to the results folder}"
DEVICE=${DEVICE:-cuda}; MINUTES=${MINUTES:-2.75}; PY=${PYTHON:-python3}; SHAPES=${SHAPES:-small,base}
BATCH=${BATCH:-256}; SEQ=${SEQ:-512}; WORKERS=${WORKERS:-12}; SEED=${SEED:-0}
CORPUS=${CORPUS:-4}; INIT=${INIT:-}; AW=${ANSWER_WEIGHT:-1}; PROBE=${PROBE:-1}; HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-$(mktemp -d /tmp/envgym-base.XXXXXX)}
mkdir -p "$OUT"
export TOKENIZERS_PARALLELISM=false  # the corpus workers are processes; no nested thread pools

collect() {  # copy what each shape produced so far into $OUT (weights, report, log)
  for shape in ${SHAPES//,/ }; do
    src="$WORK/$shape"; dst="$OUT/$shape"; mkdir -p "$dst"
    if [ -d "$src/model" ]; then cp -r "$src/model" "$dst/"
    elif [ -d "$src/checkpoint" ]; then  # cut off before the end: the last checkpoint's model
      mkdir -p "$dst/checkpoint_model"
      find "$src/checkpoint" -maxdepth 1 -type f ! -name trainer_state.pt \
        -exec cp {} "$dst/checkpoint_model/" \;
    fi
    [ -f "$src/report.json" ] && cp "$src/report.json" "$dst/"
    [ -f "$WORK/$shape.log" ] && tail -c 200000 "$WORK/$shape.log" > "$dst/train.log"
  done
  return 0
}
trap collect EXIT

"$PY" - <<'PY' | tee "$OUT/device.json"
import json, torch
print(json.dumps({"cuda": torch.cuda.is_available(), "torch": torch.__version__,
                  "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"}))
PY
for shape in ${SHAPES//,/ }; do
  start=$(date +%s)
  # the API that `envgym base-model` calls (the CLI module imports every subsystem's extras)
  "$PY" - "$WORK/$shape" "$DEVICE" "$MINUTES" "$SEED" "$shape" "$BATCH" "$SEQ" "$WORKERS" \
    "$CORPUS" "$INIT" "$AW" 2> "$WORK/$shape.log" <<'PY' || echo "shape $shape: exit $?" >&2
import sys
from envgym.agents.base_model import PretrainArgs, pretrain
out, device, minutes, seed, shape, batch, seq, workers, corpus, init, aw = sys.argv[1:]
cmd = ["envgym", "base-model", "--out", out, "--device", device, "--minutes", minutes, "--seed",
       seed, "--shape", shape, "--batch-size", batch, "--seq-len", seq, "--workers", workers,
       "--lr", "2e-3", "--checkpoint-minutes", "1", "--corpus-version", corpus,
       "--answer-weight", aw]
cmd += ["--init", init] if init else []
pretrain(PretrainArgs(out=out, device=device, minutes=float(minutes), seed=int(seed), shape=shape,
                      batch_size=int(batch), seq_len=int(seq), workers=int(workers), lr=2e-3,
                      checkpoint_minutes=1.0, command=cmd, corpus_version=int(corpus),
                      init=init or None, answer_weight=float(aw)))
PY
  echo "{\"shape\": \"$shape\", \"wall_s\": $(( $(date +%s) - start ))}" >> "$OUT/walls.jsonl"
done
collect
"$PY" - "$OUT" "${SHAPES}" <<'PY' | tee "$OUT/summary.json"
import json, sys
from pathlib import Path
out, rows = Path(sys.argv[1]), []
for shape in sys.argv[2].split(","):
    f = out / shape / "report.json"
    r = json.loads(f.read_text()) if f.is_file() else {}
    rows.append({"shape": shape, "parameters": r.get("parameters"), "tokens": r.get("tokens"),
                 "tokens_per_s": r.get("tokens_per_s"), "mfu": r.get("mfu"),
                 "loss_final": r.get("loss_final"), "valid_loss": (r.get("valid_loss") or [{}])[-1],
                 "seconds": r.get("seconds"), "device": r.get("device")})
print(json.dumps({"bench": "gpu_base_model", "runs": rows}))
PY
if [ "$PROBE" = 1 ]; then  # one CPU thread each, the shapes side by side, bounded in time
  for shape in ${SHAPES//,/ }; do
    model="$OUT/$shape/model"; [ -d "$model" ] || model="$OUT/$shape/checkpoint_model"
    [ -d "$model" ] || continue
    ( OMP_NUM_THREADS=1 timeout 300 "$PY" "$HERE/base_model.py" --n 60 --also "$model" \
        > "$OUT/$shape/probes.jsonl" 2>> "$OUT/$shape/probe.log"
      OMP_NUM_THREADS=1 timeout 200 "$PY" "$HERE/demo_diagnose.py" read "$model" --n 300 \
        > "$OUT/$shape/read.jsonl" 2>> "$OUT/$shape/probe.log" ) &
  done
  wait
  tail -n 2 "$OUT"/*/probes.jsonl "$OUT"/*/read.jsonl 2>/dev/null || true
fi

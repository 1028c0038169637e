#!/usr/bin/env bash
# The shipped base model (V4W, agents/base_weights) built from nothing in one command: the four
# links of docs/base_model.md's chain, each continuing from the one before, with the arguments
# their build_report.json recorded (seed 0, shape small). Each link's budget is wall time and its
# learning-rate schedule follows the clock, so hardware of another speed sees another number of
# tokens: the last line prints, per link, the tokens this build saw beside the recorded ones.
# The first link (v1) took 165 s on one H200; on CPU it needs about 9 hours for the same tokens,
# so give it its recorded budget on a GPU (DEVICE=cuda) or a longer one (V1_MINUTES) on CPU.
#   [DEVICE=cuda] [V1_MINUTES=2.75] [WORKERS=12] [SCALE=1] bench/base_chain.sh OUT
# SCALE multiplies every budget (0.002: the wiring check the tests run; no usable model).
# The model to ship is OUT/v4w/model (bf16 safetensors and the tokenizer).
set -euo pipefail
OUT=${1:?usage: bench/base_chain.sh OUT}
DEVICE=${DEVICE:-cuda}; V1_MINUTES=${V1_MINUTES:-2.75}; WORKERS=${WORKERS:-12}
SCALE=${SCALE:-1}; ENVGYM=${ENVGYM:-envgym}; PY=${PYTHON:-python3}
mkdir -p "$OUT"

budget() {  # minutes x SCALE, never under the CLI's floor of 0.01
  "$PY" -c "import sys; print(max(0.01, float(sys.argv[1]) * float(sys.argv[2])))" "$1" "$SCALE"
}

link() {  # NAME MINUTES ARGS...: one `envgym base-model` run into OUT/NAME
  local name=$1 minutes; minutes=$(budget "$2"); shift 2
  echo "== $name: $ENVGYM base-model --out $OUT/$name --minutes $minutes $*" >&2
  "$ENVGYM" base-model --out "$OUT/$name" --minutes "$minutes" --seed 0 --shape small "$@"
}

link v1 "$V1_MINUTES" --device "$DEVICE" --corpus-version 1 --batch-size 256 --seq-len 512 \
  --workers "$WORKERS" --lr 2e-3 --checkpoint-minutes 1
link v2 82 --init "$OUT/v1/model" --corpus-version 2 --lr 1e-3 --checkpoint-minutes 5
link v4 40 --init "$OUT/v2/model" --corpus-version 4 --lr 1e-3 --checkpoint-minutes 5
link v4w 35 --init "$OUT/v4/model" --corpus-version 4 --lr 1e-3 --answer-weight 50 \
  --checkpoint-minutes 5

exec "$PY" - "$OUT" "$(cd "$(dirname "$0")" && pwd)/candidates" <<'PY'
import json, sys
from pathlib import Path

out, kept = Path(sys.argv[1]), Path(sys.argv[2])
recorded = {"v1": "base_v1", "v2": "base_v2_63m", "v4": "base_v4", "v4w": "base_v4w"}
links = {}
for name, folder in recorded.items():
    built = json.loads((out / name / "report.json").read_text())
    was = json.loads((kept / folder / "build_report.json").read_text())
    links[name] = {"tokens": built["tokens"], "recorded_tokens": was["tokens"],
                   "steps": built["steps"], "recorded_steps": was["steps"]}
print(json.dumps({"model": str(out / "v4w" / "model"), "links": links}))
PY

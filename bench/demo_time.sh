#!/usr/bin/env bash
# `envgym demo --seed S` for each seed of SEEDS (comma-separated, default 0-9), one after the
# other, each in a fresh output directory with its stdout/stderr kept beside it. Prints one
# JSON line: the improvement rate (held-out intervals apart and success up >= 15 points), and
# per run the seed, wall and CPU seconds (user + sys of the demo process tree), the verdict,
# sampled and greedy success, the rewards with intervals and the paired gain; then the cores
# and the load average before and after. On a loaded machine wall time is inflated and CPU
# time much less so: report both, with the load.
#   bench/demo_time.sh [SEEDS] [WORKDIR]       (ENVGYM=/path/to/envgym to pick the binary)
set -euo pipefail
exec python3 - "${1:-0,1,2,3,4,5,6,7,8,9}" "${2:-}" "${ENVGYM:-envgym}" <<'PY'
import json, os, resource, shutil, subprocess, sys, tempfile, time
from pathlib import Path

seeds, work, envgym = [int(x) for x in sys.argv[1].split(",")], sys.argv[2], sys.argv[3]
runs = len(seeds)
work = Path(work or tempfile.mkdtemp(prefix="envgym-demo-time."))
work.mkdir(parents=True, exist_ok=True)
load_before = os.getloadavg()
per_run = []
for seed in seeds:
    i = f"seed{seed}"
    out = work / f"run{i}"
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(work / f"run{i}.out", "w") as o, open(work / f"run{i}.err", "w") as e:
        code = subprocess.call([envgym, "demo", "--out", str(out), "--seed", str(seed)],
                               stdout=o, stderr=e)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        m = json.loads((out / "metrics.json").read_text())
    except OSError:
        m = {}
    gain = (m.get("success_rl") or 0) - (m.get("success_sft") or 0)
    per_run.append({"seed": seed, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                    "exit": code, "improved": m.get("improved"),
                    "learned": bool(m.get("improved")) and gain >= 0.15,
                    "success_sft": m.get("success_sft"),
                    "greedy": m.get("greedy"), "reward_gain_paired": m.get("reward_gain_paired"),
                    "success_rl": m.get("success_rl"), "reward_sft": m.get("reward_sft"),
                    "reward_rl": m.get("reward_rl"),
                    "sft_s": round(m.get("seconds", {}).get("sft", -1.0), 1)})
walls = [r["wall_s"] for r in per_run]
gains = [(r["success_rl"] or 0) - (r["success_sft"] or 0) for r in per_run]
learned = sum(r["learned"] for r in per_run)
print(json.dumps({"bench": "demo_time", "runs": runs, "seeds": seeds,
                  "improvement_rate": f"{learned}/{runs}", "wall_s": walls, "max_wall_s": max(walls),
                  "under_6_min": max(walls) <= 360, "cpu_s": [r["cpu_s"] for r in per_run],
                  "all_improved": all(r["improved"] for r in per_run),
                  "min_success_gain": round(min(gains), 3), "cores": os.cpu_count(),
                  "loadavg_before": [round(x, 2) for x in load_before],
                  "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                  "workdir": str(work), "per_run": per_run}))
PY

#!/usr/bin/env bash
# `envgym demo --seed S` for each seed of SEEDS (comma-separated, default 0-9), each in a fresh
# output directory with its stdout/stderr kept beside it; JOBS (default 1) runs that many at
# once (the demo uses one torch thread, so JOBS=2 fills 2 cores; each run's wall time is then
# that of a demo sharing the machine with another). Prints one JSON line: the improvement rate
# (held-out intervals apart and success up >= 15 points), the content rates (answered accuracy
# above chance up >= 10 points, sampled and greedy, docs/demo.md), and per run the seed, wall and CPU
# seconds (user + sys of that demo's process), the verdict, sampled and greedy success, the
# rewards with intervals and the paired gain; then the cores and the load average before and
# after. On a loaded machine wall time is inflated and CPU time much less so: report both.
#   [JOBS=2] bench/demo_time.sh [SEEDS] [WORKDIR]   (ENVGYM=/path/to/envgym to pick the binary)
set -euo pipefail
exec python3 - "${1:-0,1,2,3,4,5,6,7,8,9}" "${2:-}" "${ENVGYM:-envgym}" "${JOBS:-1}" <<'PY'
import json, os, shutil, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

seeds, work, envgym = [int(x) for x in sys.argv[1].split(",")], sys.argv[2], sys.argv[3]
jobs = max(1, int(sys.argv[4]))
runs = len(seeds)
work = Path(work or tempfile.mkdtemp(prefix="envgym-demo-time."))
work.mkdir(parents=True, exist_ok=True)
load_before = os.getloadavg()


def run(seed: int) -> dict:
    """One demo; its own CPU time from wait4 (exact with several running at once)."""
    out = work / f"runseed{seed}"
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    with open(work / f"runseed{seed}.out", "w") as o, open(work / f"runseed{seed}.err", "w") as e:
        proc = subprocess.Popen([envgym, "demo", "--out", str(out), "--seed", str(seed)],
                                stdout=o, stderr=e)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    try:
        m = json.loads((out / "metrics.json").read_text())
    except OSError:
        m = {}
    gain = (m.get("success_rl") or 0) - (m.get("success_sft") or 0)
    cpu = usage.ru_utime + usage.ru_stime
    return {"seed": seed, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "exit": proc.returncode, "improved": m.get("improved"),
            "learned": bool(m.get("improved")) and gain >= 0.15,
            "success_sft": m.get("success_sft"),
            "greedy": m.get("greedy"), "reward_gain_paired": m.get("reward_gain_paired"),
            "success_rl": m.get("success_rl"), "reward_sft": m.get("reward_sft"),
            "policy": m.get("policy"), "content_gain": m.get("content_gain"),
            "content_learned": (m.get("content_gain") or 0) >= 0.10,
            "greedy_content_learned": ((m.get("greedy") or {}).get("content_gain") or 0) >= 0.10,
            "answered_sft": m.get("answered_sft"), "answered_rl": m.get("answered_rl"),
            "reward_rl": m.get("reward_rl"),
            "sft_s": round(m.get("seconds", {}).get("sft", -1.0), 1)}


with ThreadPoolExecutor(jobs) as pool:
    per_run = list(pool.map(run, seeds))
walls = [r["wall_s"] for r in per_run]
gains = [(r["success_rl"] or 0) - (r["success_sft"] or 0) for r in per_run]
learned = sum(r["learned"] for r in per_run)
print(json.dumps({"bench": "demo_time", "runs": runs, "seeds": seeds, "jobs": jobs,
                  "improvement_rate": f"{learned}/{runs}",
                  "content_rate": f"{sum(r['content_learned'] for r in per_run)}/{runs}",
                  "greedy_content_rate":
                      f"{sum(r['greedy_content_learned'] for r in per_run)}/{runs}",
                  "wall_s": walls, "max_wall_s": max(walls),
                  "under_6_min": max(walls) <= 360, "cpu_s": [r["cpu_s"] for r in per_run],
                  "all_improved": all(r["improved"] for r in per_run),
                  "min_success_gain": round(min(gains), 3), "cores": os.cpu_count(),
                  "loadavg_before": [round(x, 2) for x in load_before],
                  "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                  "workdir": str(work), "per_run": per_run}))
PY

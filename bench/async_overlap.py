"""Synchronous training against `rollout.max_staleness` 1 and 2 on the demo's task and model.

    python bench/async_overlap.py speed [--steps 8] [--reps 2] [--work DIR] [--backend server]
                                        [--setting balanced]
    python bench/async_overlap.py curve [--steps 60] [--eval-every 10] [--eval-episodes 128]

Pre-registered in `bench/async_overlap.md` before the first run. Every arm is one
`python -m envgym.agents.trainer` process on `agents/configs/demo_cpu.toml` with the
random-init tiny model (hidden 96, 2 layers) and its SFT warm start, built once and
shared, one torch thread per thread of work, as the demo runs: the synchronous loop keeps one core busy at a time, the asynchronous one runs its
rollout thread on the second core. `sync2` is the synchronous loop with two torch threads
(both cores on every op), the fair baseline for "uses 2 cores".

`speed`: arms in alternation (sync, sync2, async1, async2, then again: A B A B), no
evaluation inside the timed steps; steps/s and tokens/s over steps 2..S (step 1 holds the
start-up) from the learner's per-step wall time, which includes its waits for rollouts; the
child's CPU seconds beside the wall; the learner's and generator's idle time.
`speed --backend server`: the rollout policy is `serve-policy` in a child process of each
trainer (`model.backend = "server"`, one torch thread in each process), its weights synced
over HTTP; arms `sync` (the in-process HF loop above, the reference), `server_sync`,
`server_async1`, `server_async2`, alternated likewise. The child's CPU seconds are in the
arm's (the trainer reaps it).
`speed --setting balanced`: the same arms on the demo's setting with `ppo.kl_coef = 0` and
`ppo.minibatches = 1` (no reference forward, one optimiser step a batch, as KL-free GRPO
recipes run), where the synchronous loop spends about as long rolling out as updating
(`bench/async_overlap.md` has the calibration and the registration).
`curve`: one run per arm (sync, async1, async2), held-out reward and success every
`eval_every` steps, against the step and against the training wall time (the cumulative
per-step time, evaluation excluded). One JSON line per run, then a summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "agents" / "configs" / "demo_cpu.toml"
ARMS = {"sync": (0, 1), "sync2": (0, 2), "async1": (1, 1), "async2": (2, 1),
        "server_sync": (0, 1), "server_async1": (1, 1), "server_async2": (2, 1)}
"""arm -> (max_staleness, torch threads); `server_*` arms use `model.backend = "server"`."""
SPEED_ARMS = {"hf": ["sync", "sync2", "async1", "async2"],
              "server": ["sync", "server_sync", "server_async1", "server_async2"]}
"""`speed --backend B`: the arms alternated."""
SETTINGS = {"demo": {}, "balanced": {"kl_coef": 0.0, "minibatches": 1}}
"""`--setting S`: `[ppo]` overrides on top of the demo's config."""


def emit(**fields) -> None:
    print(json.dumps(fields), flush=True)


def base_config(work: Path, setting: str = "demo") -> dict:
    """The demo's config with its SFT warm start built once under `work/sft_base`, and the
    `setting`'s `[ppo]` overrides (they do not touch the warm start)."""
    from envgym.agents.config import _read, load_config
    from envgym.agents.sft import warm_start

    data = _read(DEMO)
    data["output_dir"] = str(work / "sft_base")
    # the pre-registered setting: the random-init tiny model and its SFT (`envgym demo
    # --policy tiny`; the demo itself moved to the shipped base model on the same day)
    data["model"] = {"policy": "tiny", "tiny_hidden_size": 96, "tiny_layers": 2,
                     "warm_start": "sft"}
    data["sft"] = {**data["sft"], "epochs": 12, "lr": 5e-3}
    policy = warm_start(load_config(data))
    data["model"] = {**data["model"], "policy": str(policy), "warm_start": "none"}
    data["ppo"] = {**data["ppo"], **SETTINGS[setting]}
    return data


def run_arm(base: dict, work: Path, name: str, tag: str, steps: int, eval_every: int,
            eval_episodes: int) -> dict:
    """One training process; its metrics, wall and CPU seconds."""
    staleness, threads = ARMS[name]
    out = work / tag
    cfg = json.loads(json.dumps(base))
    cfg.update(output_dir=str(out), steps=steps, eval_every=eval_every, checkpoint_every=0)
    cfg["rollout"] = {**cfg["rollout"], "max_staleness": staleness,
                      "eval_episodes": eval_episodes}
    cfg["log"] = {**cfg.get("log", {}), "progress": False, "tensorboard": False}
    if name.startswith("server_"):
        cfg["model"] = {**cfg["model"], "backend": "server"}
    path = work / f"{tag}.json"
    path.write_text(json.dumps(cfg))
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "TOKENIZERS_PARALLELISM": "false"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "envgym.agents.trainer", str(path),
                           "--overwrite"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{tag} failed:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    return {"records": records, "wall_s": wall, "cpu_s": cpu}


def speed_summary(records: list[dict]) -> dict:
    steps = [r for r in records if r["step"] >= 2 and "time/step_s" in r]
    secs = sum(r["time/step_s"] for r in steps)
    tokens = sum(r["throughput/tokens_per_s"] * r["time/step_s"] for r in steps)
    return {"steps_per_s": len(steps) / secs, "tokens_per_s": tokens / secs,
            "timed_steps": len(steps),
            "learner_idle_s": sum(r.get("time/learner_idle_s", 0.0) for r in steps),
            "generator_idle_s": sum(r.get("time/generator_idle_s", 0.0) for r in steps),
            "rollout_s": sum(r["time/rollout_s"] for r in steps),
            "mismatch_kl": _mean(r.get("async/mismatch_kl") for r in steps),
            "is_clipped_frac": _mean(r.get("async/is_clipped_frac") for r in steps)}


def _mean(values) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def speed(args, base: dict, work: Path) -> None:
    arms = SPEED_ARMS[args.backend]
    results: dict[str, list[dict]] = {a: [] for a in arms}
    for rep in range(args.reps):
        for arm in arms:
            got = run_arm(base, work, arm, f"speed_{arm}_{rep}", args.steps, 0, 8)
            row = {"arm": arm, "rep": rep, "setting": args.setting,
                   "wall_s": round(got["wall_s"], 1),
                   "cpu_s": round(got["cpu_s"], 1), **speed_summary(got["records"]),
                   "loadavg": os.getloadavg()[0]}
            results[arm].append(row)
            emit(kind="speed", **row)
    mean = {a: sum(r["steps_per_s"] for r in rows) / len(rows) for a, rows in results.items()}
    tok = {a: sum(r["tokens_per_s"] for r in rows) / len(rows) for a, rows in results.items()}
    base_arm = "sync2" if "sync2" in mean else "server_sync"
    emit(kind="speed_summary", backend=args.backend, setting=args.setting, steps_per_s=mean,
         tokens_per_s=tok,
         speedup_vs_sync={a: mean[a] / mean["sync"] for a in arms},
         **{f"speedup_vs_{base_arm}": {a: mean[a] / mean[base_arm] for a in arms}},
         cores=os.cpu_count())


def curve(args, base: dict, work: Path) -> None:
    finals = {}
    for arm in ("sync", "async1", "async2"):
        got = run_arm(base, work, arm, f"curve_{arm}", args.steps, args.eval_every,
                      args.eval_episodes)
        wall, points = 0.0, []
        for r in got["records"]:
            wall += r.get("time/step_s", 0.0)
            if "eval/reward" in r:
                points.append({"step": r["step"], "train_wall_s": round(wall, 1),
                               "reward": r["eval/reward"],
                               "reward_lo": r.get("eval/TimeSeries-v0/reward_lo"),
                               "reward_hi": r.get("eval/TimeSeries-v0/reward_hi"),
                               "success": r.get("eval/TimeSeries-v0/success")})
        finals[arm] = points[-1]
        emit(kind="curve", arm=arm, wall_s=round(got["wall_s"], 1),
             cpu_s=round(got["cpu_s"], 1), points=points)
    emit(kind="curve_summary", final=finals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["speed", "curve"])
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--eval-episodes", type=int, default=128)
    parser.add_argument("--work", default=None)
    parser.add_argument("--backend", choices=sorted(SPEED_ARMS), default="hf",
                        help="speed: the in-process arms (hf) or the served-policy ones")
    parser.add_argument("--setting", choices=sorted(SETTINGS), default="demo",
                        help="speed: the demo's [ppo] or the balanced one (see the docstring)")
    args = parser.parse_args()
    args.steps = args.steps or (8 if args.part == "speed" else 60)
    work = Path(args.work or tempfile.mkdtemp(prefix="envgym-async."))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    base = base_config(work, args.setting)
    (speed if args.part == "speed" else curve)(args, base, work)


if __name__ == "__main__":
    main()

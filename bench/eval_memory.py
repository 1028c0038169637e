"""First-eval stampede and memory benchmark; prints one JSON line per measurement.

    python bench/eval_memory.py [--envs Search-v0,Consult-v0] [--episodes 64] [--eval-episodes 200]
                                [--repeats 2] [--threads 2]

Every measurement runs in a fresh child process, because the point is what a new user's first
`envgym eval` pays:

1. `first_collect`: a fresh process's first `collect(env, "scripted:oracle", episodes=64)` at
   concurrency 1 and at concurrency 64 (the engine default), alternating 1, 64, 1, 64. The
   time includes building the environment's shared resources (world, index, encoder, bank),
   which happens once per process whatever the concurrency. Goal: ratio c64/c1 < 1.5.
2. `oracle_eval`: a fresh process builds the environment's shared resources (`build_s`), then
   runs 200 oracle episodes through `run_episodes` (what `envgym eval` runs) at the default
   concurrency: peak RSS (ru_maxrss of the child) and episodes/s, without and with the build. Goal for Consult-v0: peak RSS < 2 GB and >= 5 episodes/s on 2 cores.

`--threads` limits the child to that many CPU cores (sched_setaffinity), so a 16-core box
measures the 2-core case too. Each line says `ok` against its goal, plainly.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ENVS = ("TimeSeries-v0", "Debate-v0", "SafetyRules-v0", "CodeRefine-v0", "Search-v0", "Consult-v0")
RSS_GOAL_MB, EPS_GOAL = 2048, 5.0  # Consult-v0's goals (issue 20)


def emit(**record) -> None:
    print(json.dumps(record), flush=True)


def _policy(env_id: str):
    from envgym.registration import spec

    return {"*": "scripted:oracle"} if spec(env_id).multi_agent else "scripted:oracle"


def child(args) -> None:
    """One measurement in this (fresh) process; prints a JSON dict on the last line."""
    import resource

    import envgym  # noqa: F401 - registers the environments
    from envgym.evaluation import run_episodes
    from envgym.rollout import collect, collect_multi
    from envgym.registration import spec

    env_id = "envgym/" + args.env
    build_s = 0.0
    if args.mode == "eval":  # build the shared resources first, to report them apart
        from envgym.registration import make

        t = time.perf_counter()
        make(env_id).close()
        build_s = time.perf_counter() - t
    t = time.perf_counter()
    if args.mode == "first":
        run = collect_multi if spec(env_id).multi_agent else collect
        trajs = run(env_id, _policy(env_id), episodes=args.episodes, concurrency=args.concurrency)
    else:
        trajs = run_episodes(env_id, _policy(env_id), episodes=args.episodes)
    seconds = time.perf_counter() - t
    errors = sum(1 for tr in trajs if getattr(tr, "error", None))
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "build_s": build_s, "errors": errors, "rss_mb": rss_mb,
                      "threads": _thread_count()}))


def _thread_count() -> int:
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))
    except (OSError, StopIteration):
        return -1


def spawn(env: str, mode: str, episodes: int, concurrency: int, threads: int) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--env", env, "--episodes", str(episodes),
           "--concurrency", str(concurrency)]
    cores = sorted(os.sched_getaffinity(0))[:threads] if threads else None
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800,
                          preexec_fn=(lambda: os.sched_setaffinity(0, cores)) if cores else None)
    if proc.returncode != 0:
        return {"failed": proc.stderr.strip().splitlines()[-1:] or ["exit " + str(proc.returncode)]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def first_collect(env: str, episodes: int, repeats: int, threads: int) -> None:
    runs: dict[int, list[dict]] = {1: [], 64: []}
    for _ in range(repeats):
        for c in (1, 64):  # alternate A B A B
            runs[c].append(spawn(env, "first", episodes, c, threads))
    if any("failed" in r for rs in runs.values() for r in rs):
        emit(bench="first_collect", env=env, failed=[r for rs in runs.values() for r in rs
                                                   if "failed" in r][0]["failed"])
        return
    s1 = statistics.median(r["seconds"] for r in runs[1])
    s64 = statistics.median(r["seconds"] for r in runs[64])
    emit(bench="first_collect", env=env, episodes=episodes, c1_s=round(s1, 2), c64_s=round(s64, 2),
         ratio=round(s64 / s1, 2), ok=s64 / s1 < 1.5,
         runs_c1=[round(r["seconds"], 2) for r in runs[1]],
         runs_c64=[round(r["seconds"], 2) for r in runs[64]],
         errors=sum(r["errors"] for rs in runs.values() for r in rs), cores=threads or os.cpu_count())


def oracle_eval(env: str, episodes: int, threads: int) -> None:
    r = spawn(env, "eval", episodes, 64, threads)
    if "failed" in r:
        emit(bench="oracle_eval", env=env, failed=r["failed"])
        return
    record = dict(bench="oracle_eval", env=env, episodes=episodes, seconds=round(r["seconds"], 2),
                  build_s=round(r["build_s"], 2), episodes_per_s=round(episodes / r["seconds"], 2),
                  episodes_per_s_with_build=round(episodes / (r["seconds"] + r["build_s"]), 2),
                  peak_rss_mb=round(r["rss_mb"]),
                  threads_at_end=r["threads"], errors=r["errors"], cores=threads or os.cpu_count())
    if env == "Consult-v0":
        record.update(rss_goal_mb=RSS_GOAL_MB, eps_goal=EPS_GOAL,
                      ok=r["rss_mb"] < RSS_GOAL_MB and episodes / r["seconds"] >= EPS_GOAL)
    emit(**record)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--envs", default=",".join(ENVS))
    p.add_argument("--episodes", type=int, default=64)
    p.add_argument("--eval-episodes", type=int, default=200)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--threads", type=int, default=2, help="CPU cores per child (0: all)")
    p.add_argument("--skip", default="", help="'first' or 'eval' to skip that part")
    p.add_argument("--child", choices=("first", "eval"), help=argparse.SUPPRESS)
    p.add_argument("--env", help=argparse.SUPPRESS)
    p.add_argument("--concurrency", type=int, default=64, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        args.mode = args.child
        return child(args)
    for env in [e.strip().removeprefix("envgym/") for e in args.envs.split(",") if e.strip()]:
        if args.skip != "first":
            first_collect(env, args.episodes, args.repeats, args.threads)
        if args.skip != "eval":
            oracle_eval(env, args.eval_episodes, args.threads)


if __name__ == "__main__":
    main()

"""Ray rollout workers against the in-process engine: one JSON line per configuration.

    python bench/rollout_workers.py [--episodes 32] [--repeats 3] [--workers 1 2 4]

Episodes/s of CodeRefine-v0 with the scripted oracle (the sandbox is the CPU-bound part),
in-process and over a local Ray cluster at each worker count, as a ratio to in-process.
Pools are built and warmed before timing (actor start-up is a one-off cost per run, printed
apart), and the configurations are run in alternation, A B C D A B C D, so a drifting load
on a shared machine does not favour one. On a 2-core machine the scaling stops at 2: the
point there is that workers work and their overhead stays small.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

ENV = "envgym/CodeRefine-v0"


def emit(**fields) -> None:
    print(json.dumps(fields), flush=True)


def timed(target, policy, episodes: int) -> float:
    from envgym.rollout import collect

    start = time.perf_counter()
    trajs = collect(target, policy, episodes=episodes, concurrency=episodes)
    elapsed = time.perf_counter() - start
    failed = sum(t.error is not None for t in trajs)
    if failed:
        raise SystemExit(f"{failed} episodes failed: {[t.error for t in trajs if t.error][0]}")
    return episodes / elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = ap.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    from envgym.integrations.ray import EnvPool, scripted_factory

    # Logical CPUs for every actor of every pool at once (they take turns on the real cores).
    ray.init(num_cpus=max(sum(args.workers), os.cpu_count() or 1), include_dashboard=False,
             log_to_driver=False, configure_logging=False)
    targets = {"in_process": (ENV, "scripted:oracle")}
    for n in args.workers:
        t0 = time.perf_counter()
        pool = EnvPool(ENV, n)
        timed(pool, scripted_factory("scripted:oracle"), n)  # warm every actor
        emit(bench="rollout_workers", workers=n, startup_s=round(time.perf_counter() - t0, 2))
        targets[f"workers_{n}"] = (pool, scripted_factory("scripted:oracle"))
    timed(ENV, "scripted:oracle", 2)  # warm the in-process caches the same way
    rates: dict[str, list[float]] = {k: [] for k in targets}
    for _ in range(args.repeats):
        for name, (target, policy) in targets.items():
            rates[name].append(timed(target, policy, args.episodes))
    base = statistics.median(rates["in_process"])
    for name, values in rates.items():
        med = statistics.median(values)
        emit(bench="rollout_workers", config=name, episodes=args.episodes, repeats=args.repeats,
             episodes_per_s=round(med, 2), ratio_to_in_process=round(med / base, 3),
             cpus=os.cpu_count())
    ray.shutdown()


if __name__ == "__main__":
    main()

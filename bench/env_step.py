"""Step latency of the time-series environment, without any policy, and episodes per second
with each scripted policy. Prints one JSON line per measurement.

    python bench/env_step.py [--episodes 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import envgym
from envgym.evaluation import run_episodes
from envgym.environments.timeseries.policies import OraclePolicy

ENV = "envgym/TimeSeries-v0"


def step_latency(episodes: int) -> dict:
    env = envgym.make(ENV)
    times = []
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        messages, policy, done = list(obs), OraclePolicy(seed=seed), False
        while not done:
            action = policy.act(env, messages)  # outside the timed region
            start = time.perf_counter()
            obs, _, term, trunc, _ = env.step(action)
            times.append(time.perf_counter() - start)
            messages += [{"role": "assistant", "content": action}, *obs]
            done = term or trunc
    return {"bench": "env_step", "env": ENV, "steps": len(times),
            "median_step_ms": 1000 * statistics.median(times),
            "p95_step_ms": 1000 * sorted(times)[int(0.95 * len(times))]}


def episodes_per_second(policy: str, episodes: int) -> dict:
    start = time.perf_counter()
    run_episodes(ENV, policy, episodes=episodes)
    elapsed = time.perf_counter() - start
    return {"bench": "env_episodes", "env": ENV, "policy": policy, "episodes": episodes,
            "episodes_per_s": episodes / elapsed}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=200)
    args = parser.parse_args()
    print(json.dumps(step_latency(args.episodes)))
    for name in ("oracle", "heuristic", "random"):
        print(json.dumps(episodes_per_second(f"scripted:{name}", args.episodes)))

"""CodeRefine-v0 throughput: episodes per second for the oracle and refiner policies, and the
share of wall time spent inside the sandbox (build + run + judge). Prints one JSON line each.

    python bench/code_env.py [--backend bwrap] [--episodes 42]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

from envgym.environments.code import CodeRefineEnv
from envgym.environments.code.policies import OraclePolicy, RefinerPolicy

POLICIES = {"oracle": OraclePolicy, "refiner": RefinerPolicy}


def bench(policy: str, episodes: int, backend: str) -> dict:
    env = CodeRefineEnv(backend=backend)
    start, sandbox_s, successes, turns = time.perf_counter(), 0.0, 0, 0
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        agent, messages, done = POLICIES[policy](seed), list(obs), False
        while not done:
            action = agent.act(env, messages)
            obs, _, term, trunc, info = env.step(action)
            messages += [{"role": "assistant", "content": action}, *obs]
            done, turns = term or trunc, turns + 1
        sandbox_s += info["outcome"]["sandbox_s"]
        successes += info["outcome"]["success"]
    wall = time.perf_counter() - start
    env.close()
    return {"bench": "code_env", "policy": policy, "backend": backend, "episodes": episodes,
            "episodes_per_s": round(episodes / wall, 3), "turns_per_s": round(turns / wall, 3),
            "sandbox_share": round(sandbox_s / wall, 3), "success": successes / episodes,
            "wall_s": round(wall, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="bwrap")
    parser.add_argument("--episodes", type=int, default=42)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for policy in POLICIES:
        print(json.dumps(bench(policy, args.episodes, args.backend)), flush=True)


if __name__ == "__main__":
    main()

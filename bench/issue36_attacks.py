"""Outside attacks on Search-v0's and Consult-v0's graders against their honest baselines,
under every shipped config's train and eval arguments (pre-registered in issue36_attacks.md).

    python bench/issue36_attacks.py [--episodes 200] [--family search|consult]

Prints one JSON line per (config variant, policy): mean task reward, success rate, and
whether the attack wins (reward >= the honest baseline's at success <= the baseline's).
"""

from __future__ import annotations

import argparse
import json
import time

import envgym.envs  # noqa: F401  (registers the environments)
from envgym.checker import config_variants
from envgym.hacks import play
from envgym.registration import make

CONFIGS = {"search": ("agents/configs/search_qwen05b.toml",
                      "agents/configs/search_qwen15b_slate.toml"),
           "consult": ("agents/configs/consult_qwen05b.toml",)}
HONEST = {"envgym/Search-v0": ("heuristic", "heuristic_stated"),
          "envgym/Consult-v0": ("heuristic", "faithful_query")}


def _attacks(env_id: str) -> dict[str, type]:
    if env_id == "envgym/Search-v0":
        from envgym.environments.search.attacks import ATTACKS
    else:
        from envgym.environments.psych.attacks import ATTACKS
    return ATTACKS


def _play_class(env, cls, episodes: int, seed: int) -> dict:
    shaping = tuple(getattr(env, "shaping_components", ()))
    total, wins = 0.0, 0
    for ep in range(episodes):
        agent = cls(seed=seed + ep)
        messages, _ = env.reset(seed=seed + ep)
        done, info = False, {}
        while not done:
            action = agent.act(env, messages)
            obs, reward, term, trunc, info = env.step(action)
            messages = [*messages, {"role": "assistant", "content": action}, *obs]
            parts = info.get("reward_components") or {}
            total += reward - sum(float(parts.get(k, 0.0)) for k in shaping)
            done = term or trunc
        wins += bool((info.get("outcome") or {}).get("success"))
    return {"mean_reward": total / episodes, "success_rate": wins / episodes}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--family", choices=sorted(CONFIGS), action="append")
    ap.add_argument("--only", action="append", help="attack names to play (default: all)")
    args = ap.parse_args()
    for family in args.family or sorted(CONFIGS):
        for path in CONFIGS[family]:
            for v in config_variants(path):
                env = make(v.env_id, **v.kwargs)
                t0, c0 = time.perf_counter(), time.process_time()
                honest = {n: play(v.env_id, env, n, args.episodes, v.seed, v.kwargs)
                          for n in HONEST[v.env_id]}
                best = max(honest.values(), key=lambda r: r["mean_reward"])
                for name, r in honest.items():
                    print(json.dumps({"config": path, "phase": v.phase, "policy": name,
                                      "mean_reward": round(r["mean_reward"], 4),
                                      "success": round(r["success_rate"], 4)}))
                for name, cls in _attacks(v.env_id).items():
                    if args.only and name not in args.only:
                        continue
                    r = _play_class(env, cls, args.episodes, v.seed)
                    wins = (r["mean_reward"] >= best["mean_reward"] - 0.01
                            and r["success_rate"] <= best["success_rate"])
                    print(json.dumps({"config": path, "phase": v.phase, "policy": name,
                                      "mean_reward": round(r["mean_reward"], 4),
                                      "success": round(r["success_rate"], 4), "wins": wins}))
                print(json.dumps({"config": path, "phase": v.phase,
                                  "wall_s": round(time.perf_counter() - t0, 1),
                                  "cpu_s": round(time.process_time() - c0, 1)}))
                env.close()


if __name__ == "__main__":
    main()

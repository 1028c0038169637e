"""Outside attacks on CodeRefine-v0 and the ILR debate against their honest baselines, under
the shipped configs' train and eval arguments (pre-registered in issue36_code_debate.md).

    OMP_NUM_THREADS=1 nice -n 10 python bench/issue36_code_debate.py [--family code|debate]

Prints one JSON line per (variant, policy): mean reward (task reward; `train_reward` adds
the progress shaping), success rate, whether the attack wins (reward >= the honest
baseline's at success <= the baseline's), and for CodeRefine the defects a hostile program
may cause: env exceptions, hidden inputs seen in an observation, files left on the host.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
import traceback

import envgym.envs  # noqa: F401  (registers the environments)
from envgym.registration import make

CODE_VARIANTS = {"code_qwen15b train": {"split": "train"},
                 "code_qwen15b eval": {"split": "test"},
                 "progress 0.5 fraction (not shipped)": {"split": "train", "progress_coef": 0.5,
                                                         "reward": "fraction"}}
DEBATE_KW = {"n_agents": 2, "interaction": "dynamic", "n_generated": 1000}
DEBATE_VARIANTS = {"debate_ilr_cpu train": range(0, 200), "debate_ilr_cpu eval": range(900, 964)}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return sum(x.ru_utime + x.ru_stime for x in r)


# ---- CodeRefine ---------------------------------------------------------------------------

def _code_episode(env, policy, seed: int) -> dict:
    messages, _ = env.reset(seed=seed)
    hidden = [t["input"].strip() for t in env.problem.hidden_tests if len(t["input"].strip()) >= 8]
    public = {t["input"].strip() for t in env.problem.public_tests}
    hidden = [h for h in hidden if not any(h in p for p in public)]
    done, info, total, shaping, leaks = False, {}, 0.0, 0.0, 0
    while not done:
        action = policy.act(env, messages)
        obs, reward, term, trunc, info = env.step(action)
        text = "\n".join(str(m["content"]) for m in obs)
        leaks += sum(h in text for h in hidden)
        messages = [*messages, {"role": "assistant", "content": action}, *obs]
        total += reward
        shaping += float((info.get("reward_components") or {}).get("progress", 0.0))
        done = term or trunc
    success = bool((info.get("outcome") or {}).get("success"))
    return {"reward": total - shaping, "train": total, "success": success, "leaks": leaks}


def run_code(problems_cap: int | None) -> None:
    from envgym.environments.code.attacks import ATTACKS, HEAVY, HOST_MARKERS
    from envgym.environments.code.policies import OraclePolicy, RefinerPolicy

    arms = {"refiner": RefinerPolicy, "oracle": OraclePolicy, **ATTACKS}
    for variant, kwargs in CODE_VARIANTS.items():
        env = make("envgym/CodeRefine-v0", **kwargs)
        n = len(env.problems)
        rows = {}
        for name, cls in arms.items():
            if variant.startswith("progress") and name not in ("refiner", "oracle",
                                                               "progress_farm", "tool_spam"):
                continue
            seeds = range(min(n, 6) if name in HEAVY else (problems_cap or n))
            start, cpu, errors, eps = time.time(), _cpu(), 0, []
            for seed in seeds:
                try:
                    eps.append(_code_episode(env, cls(seed=seed), seed))
                except Exception:  # a hostile program must never crash the env: count it
                    errors += 1
                    traceback.print_exc()
            rows[name] = row = {
                "variant": variant, "policy": name, "episodes": len(seeds),
                "mean_reward": round(sum(e["reward"] for e in eps) / max(1, len(eps)), 4),
                "train_reward": round(sum(e["train"] for e in eps) / max(1, len(eps)), 4),
                "success_rate": round(sum(e["success"] for e in eps) / max(1, len(eps)), 4),
                "env_errors": errors, "hidden_input_leaks": sum(e["leaks"] for e in eps),
                "host_files": [p for p in HOST_MARKERS if os.path.exists(os.path.expanduser(p))],
                "wall_s": round(time.time() - start, 1), "cpu_s": round(_cpu() - cpu, 1)}
            base = rows["refiner"]
            row["wins"] = name not in ("refiner", "oracle") and (
                row["mean_reward"] >= base["mean_reward"] - 0.01
                and row["success_rate"] <= base["success_rate"])
            print(json.dumps(row), flush=True)


# ---- Debate -------------------------------------------------------------------------------

def _debate_arm(name: str, seeds: range) -> dict:
    from envgym.environments.debate.attacks import ATTACKS
    from envgym.environments.debate.driver import play
    from envgym.environments.debate.policies import Noisy

    cls = ATTACKS.get(name, Noisy)
    env = make("envgym/Debate-v0", **DEBATE_KW)
    rewards, calibrated, success = [], [], []
    for seed in seeds:
        policies = {a: cls(seed=seed * 7 + k, agent=a) for k, a in enumerate(env.possible_agents)}
        infos = play(env, policies, seed=seed)
        out = infos["agent_0"]["outcome"]
        rewards += list(out["returns"].values())
        calibrated += list(out["calibrated"].values())
        success += [float(v) for v in out["final"].values()]
    n = len(rewards)
    return {"mean_reward": round(sum(rewards) / n, 4),
            "mean_calibrated": round(sum(calibrated) / n, 4),
            "success_rate": round(sum(success) / n, 4)}


def run_debate() -> None:
    from envgym.environments.debate.attacks import ATTACKS

    for variant, seeds in DEBATE_VARIANTS.items():
        base = None
        for name in ("noisy", *ATTACKS):
            start, cpu = time.time(), _cpu()
            row = {"variant": variant, "policy": name, "episodes": len(seeds),
                   **_debate_arm(name, seeds)}
            base = base or row
            row["wins"] = name != "noisy" and (row["mean_reward"] >= base["mean_reward"] - 0.01
                                               and row["success_rate"] <= base["success_rate"])
            row |= {"wall_s": round(time.time() - start, 1), "cpu_s": round(_cpu() - cpu, 1)}
            print(json.dumps(row), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", choices=("code", "debate"), action="append")
    ap.add_argument("--problems", type=int, default=None, help="cap per split (default: all)")
    args = ap.parse_args()
    for family in args.family or ("debate", "code"):
        run_debate() if family == "debate" else run_code(args.problems)


if __name__ == "__main__":
    main()

"""SLATE's claim, measured on envgym: truncated step sampling cuts the variance of step
advantages by up to a factor T against outcome-level GRPO on the same questions.

The policy is the offline tiny model after a short warm start on noisy scripted Search-v0
demonstrations (an untrained tiny model writes no tags, so every reward would be the same
invalid-action penalty). Rewards are Search-v0's with the rule judge: Eq. 3 per search step,
Eq. 4 at the answer. For each horizon T (decisions per episode: B = T - 1 search steps, then
the forced answer), on the same questions and with the same k:

* SLATE: `envgym.tree.slate_trees` grows one tree per question with k siblings per step; the
  `slate` credit (std off) gives A_j = r_{t,j} - mean_k r_t, the other steps held fixed;
* GRPO: k full trajectories per question (`slate_trees` with one candidate per step, so the
  forced answer is the same); the `grpo` credit (std off, Dr. GRPO) gives every step
  A_i = R_i - mean_k R, R the sum of the step rewards.

Both are envgym's own estimators (`compute_credit`) on envgym rollouts. We print the
variance of the per-step advantage of each, their ratio (SLATE's claim: up to T under i.i.d.
steps; on a real policy the steps' rewards are correlated and the prefix is shared, so the
measured ratio can exceed T) and how many estimates each rests on. One JSON line per T.

    python bench/credit_variance.py [--questions 12] [--k 5] [--horizons 1 2 4]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from envgym.agents.credit import compute_credit
from envgym.agents.policies.hf import HFPolicy
from envgym.agents.sft import noisy_demonstrations, sft, tokenize_trajectories
from envgym.agents.tiny import build_tiny_model
from envgym.policy import SamplingParams
from envgym.tree import slate_trees

ENV = "envgym/Search-v0"
JUDGED = {"judge": "rule"}
MIX = {"oracle": 0.4, "heuristic": 0.3, "random": 0.3}


def warm_policy(tmp: Path, episodes: int = 128, epochs: int = 8) -> HFPolicy:
    """The tiny model, fine-tuned for a few epochs on noisy scripted demonstrations."""
    policy = HFPolicy(str(build_tiny_model(tmp / "m", hidden_size=64, layers=2)), device="cpu")
    demos = noisy_demonstrations(ENV, MIX, episodes, (0, 500), env_kwargs={"max_turns": 3})
    sft(policy.model, tokenize_trajectories(demos, policy.chat), epochs=epochs, batch_size=16,
        lr=5e-3, pad_id=policy.pad_id)
    return policy


def step_advantages(trajs, chain: list[str], options: dict, tokenizer) -> np.ndarray:
    """One advantage per trained action turn (they are constant over a turn's tokens)."""
    batch = compute_credit(trajs, chain, options, tokenizer=tokenizer)
    return np.array([float(a[0]) for row, mask in zip(batch.advantages, batch.turn_mask)
                     for a, on in zip(row, mask) if on and a.size])


def measure(policy: HFPolicy, horizon: int, questions: int, k: int, seed: int) -> dict:
    """Both estimators at T = `horizon` decisions: B = T - 1 search steps, then the answer."""
    budget = horizon - 1
    sampling = SamplingParams(max_tokens=48, temperature=1.0, seed=seed)
    common = {"first_seed": 1000, "n_tasks": questions, "budget": budget, "eta": 0.7,
              "env_kwargs": JUDGED, "sampling": sampling, "seed": seed}
    t0 = time.perf_counter()
    trees = slate_trees(ENV, policy, k=k, trees=1, **common)
    t_tree = time.perf_counter() - t0
    t0 = time.perf_counter()  # k full trajectories per question: trees of one candidate
    full = [t for t in slate_trees(ENV, policy, k=1, trees=k, **common)
            if t.meta.get("final") and t.error is None]
    t_full = time.perf_counter() - t0
    a_slate = step_advantages([t for t in trees if t.error is None], ["slate"],
                              {"slate": {"std_norm": False}}, policy.tokenizer)
    a_grpo = step_advantages(full, ["grpo"], {"grpo": {"std_norm": False}}, policy.tokenizer)
    v_slate, v_grpo = float(a_slate.var()), float(a_grpo.var())
    return {"bench": "credit_variance", "env": ENV, "judge": "rule", "T": horizon,
            "search_budget_B": budget, "k": k, "questions": questions,
            "var_step_adv_slate": v_slate, "var_step_adv_grpo": v_grpo,
            "variance_ratio_grpo_over_slate": v_grpo / v_slate if v_slate > 0 else float("nan"),
            "claimed_up_to": horizon, "slate_estimates": int(a_slate.size),
            "grpo_estimates": int(a_grpo.size),
            "mean_decisions_grpo": float(np.mean([len(t.turns) for t in full])),
            "step_reward_corr_grpo": _step_correlation(full),
            "rollout_s_slate": round(t_tree, 2), "rollout_s_grpo": round(t_full, 2)}


def _step_correlation(trajs) -> float | None:
    """Correlation of consecutive step rewards within a trajectory: above 0, a return's
    variance exceeds the sum of its steps' (why a measured ratio can pass T)."""
    pairs = [(a.reward, b.reward) for t in trajs for a, b in zip(t.turns, t.turns[1:])]
    if len(pairs) < 3:
        return None
    x, y = np.array(pairs).T
    return float(np.corrcoef(x, y)[0, 1]) if x.std() > 0 and y.std() > 0 else None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=12)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--horizons", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        policy = warm_policy(Path(tmp))
        for horizon in args.horizons:
            print(json.dumps(measure(policy, horizon, args.questions, args.k, args.seed)), flush=True)


if __name__ == "__main__":
    sys.exit(main())

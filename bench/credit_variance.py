"""Variance of step advantages on envgym: SLATE's tree against two tree-free baselines.

SLATE claims that truncated step sampling cuts the variance of step advantages by up to a
factor T against outcome-level GRPO. This bench measures that variance for three estimators
on the same questions, with the same k, and prints one JSON line per horizon T. It reports
the numbers; it does not test why they differ.

The policy is the offline tiny model after a short warm start on noisy scripted Search-v0
demonstrations (an untrained tiny model writes no tags, so every reward would be the same
invalid-action penalty). Rewards are Search-v0's with the rule judge: Eq. 3 per search step,
Eq. 4 at the answer. For each horizon T (decisions per episode: B = T - 1 search steps, then
the forced answer):

* `slate`: `envgym.tree.slate_trees` grows one tree per question with k siblings per step;
  the `slate` credit (std off) gives A_j = r_{t,j} - mean_k r_t over siblings that share
  their prefix;
* `grpo`: k independent full trajectories per question (`slate_trees` with one candidate per
  step, so the answer is forced after B as in the tree); the `grpo` credit (std off,
  Dr. GRPO) gives every step A_i = R_i - mean_k R, R the sum of the step rewards;
* `control`: the same independent trajectories, no tree; the `turn` credit with gamma = 0
  (std off) gives A_{i,t} = r_{i,t} - mean r_t, the mean over the question's trajectories
  that reached step t. It centres each step reward as SLATE does, but over trajectories
  whose prefixes differ.

All three are envgym's own estimators (`compute_credit`) on envgym rollouts. Each line holds
the variance of the per-step advantage of each estimator, the ratios grpo/slate,
grpo/control and control/slate, how many estimates each rests on, and the Pearson
correlation of consecutive step rewards within the independent trajectories.

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
# A_{i,t} = r_{i,t} - mean r_t per step index (gamma 0: the step reward, no future terms)
CONTROL = {"mode": "return", "gamma": 0.0, "std_norm": False}


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
    rows = zip(batch.advantages, batch.turn_mask, strict=True)
    return np.array([float(a[0]) for row, mask in rows
                     for a, on in zip(row, mask, strict=True) if on and a.size])


def measure(policy: HFPolicy, horizon: int, questions: int, k: int, seed: int) -> dict:
    """The three estimators at T = `horizon` decisions: B = T - 1 search steps, then the
    forced answer."""
    budget = horizon - 1
    sampling = SamplingParams(max_tokens=48, temperature=1.0, seed=seed)
    common = {"first_seed": 1000, "n_tasks": questions, "budget": budget, "eta": 0.7,
              "env_kwargs": JUDGED, "sampling": sampling, "seed": seed}
    t0 = time.perf_counter()
    trees = slate_trees(ENV, policy, k=k, trees=1, **common)
    t_tree = time.perf_counter() - t0
    t0 = time.perf_counter()  # k independent trajectories per question: trees of one candidate
    full = [t for t in slate_trees(ENV, policy, k=1, trees=k, **common)
            if t.meta.get("final") and t.error is None]
    t_full = time.perf_counter() - t0
    tok = policy.tokenizer
    adv = {"slate": step_advantages([t for t in trees if t.error is None], ["slate"],
                                    {"slate": {"std_norm": False}}, tok),
           "grpo": step_advantages(full, ["grpo"], {"grpo": {"std_norm": False}}, tok),
           "control": step_advantages(full, ["turn"], {"turn": CONTROL}, tok)}
    var = {name: float(a.var()) for name, a in adv.items()}
    return {"bench": "credit_variance", "env": ENV, "judge": "rule", "T": horizon,
            "search_budget_B": budget, "k": k, "questions": questions,
            **{f"var_step_adv_{name}": v for name, v in var.items()},
            "variance_ratio_grpo_over_slate": _ratio(var["grpo"], var["slate"]),
            "variance_ratio_grpo_over_control": _ratio(var["grpo"], var["control"]),
            "variance_ratio_control_over_slate": _ratio(var["control"], var["slate"]),
            "claimed_up_to": horizon,
            **{f"{name}_estimates": int(a.size) for name, a in adv.items()},
            "mean_decisions_independent": float(np.mean([len(t.turns) for t in full])),
            "step_reward_corr_independent": _step_correlation(full),
            "rollout_s_slate": round(t_tree, 2), "rollout_s_independent": round(t_full, 2)}


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else float("nan")


def _step_correlation(trajs) -> float | None:
    """Pearson correlation of consecutive step rewards (r_t, r_{t+1}) within a trajectory,
    pooled over trajectories; None when there are too few pairs or no spread."""
    pairs = [(a.reward, b.reward) for t in trajs
             for a, b in zip(t.turns[:-1], t.turns[1:], strict=True)]
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
            row = measure(policy, horizon, args.questions, args.k, args.seed)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    sys.exit(main())

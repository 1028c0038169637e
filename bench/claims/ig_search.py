"""IG-Search: information-gain-modulated GRPO against GRPO on Search-v0, most groups failing.

Pre-registered before any run of this file (a setting changed after a result is a new claim
file, and this one's result stays).

Paper (methods.md §1): step-level information gain (how much a query's retrieved block
raises the policy's log-probability of the gold answer, against random blocks) gives query
tokens a learning signal even in groups whose every answer is wrong, where GRPO's outcome
advantage is zero; this improves exact match.
Hypothesis: from a weak SFT warm start on which most groups fail, GRPO + IG (alpha 0.5,
clip 1) gives non-zero advantages in a large share of all-fail groups (GRPO: none) and a
higher held-out exact match than GRPO alone.
Everything else equal: tiny model (96 hidden, 2 layers), SFT on 128 demonstrations mixed per
turn 0.2 oracle / 0.3 heuristic / 0.5 random (8 epochs), protocol "ig", 8 tasks x 5 rollouts
a step, 15 steps, PPO-clip, lr 2e-4, held-out seeds 1_000_000.. (64 questions, greedy).
Seeds: 1, 2, 3. Budget: 20 minutes on 2 idle cores.

Added after the first run (a measurement, no setting changed): `tied_with_signal`, the share of
groups whose members all have the same return in which some token still has a non-zero
advantage. The first run's GRPO arm had signal in 0.86-0.98 of its all-fail groups, because
Search-v0's format penalties make failing members' returns differ; only a tied group isolates
the signal GRPO cannot give.
"""

from __future__ import annotations

from common import Arm, Claim, ig_measures


def base(seed: int) -> dict:
    return {
        "seed": seed, "steps": 15, "checkpoint_every": 0, "eval_every": 0,
        "model": {"policy": "tiny", "tiny_hidden_size": 96, "tiny_layers": 2},
        "envs": [{"id": "envgym/Search-v0", "kwargs": {"protocol": "ig"},
                  "train_seeds": [0, 1_000_000], "eval_seeds": [1_000_000, 1_000_064]}],
        "rollout": {"group_size": 5, "tasks_per_step": 8, "max_turns": 4, "max_tokens": 48,
                    "eval_temperature": 0.0, "eval_episodes": 64},
        "ppo": {"minibatches": 2, "kl_coef": 0.001, "kl_estimator": "k3"},
        "optim": {"lr": 2e-4},
        "sft": {"scripted": {"oracle": 0.2, "heuristic": 0.3, "random": 0.5}, "episodes": 128,
                "epochs": 8, "batch_size": 16, "lr": 5e-3},
        "log": {"tensorboard": False, "progress": False, "trajectories": True},
    }


CLAIM = Claim(
    name="ig_search",
    paper="IG-Search: step-level information-gain rewards give search queries credit in "
          "all-wrong groups and raise exact match",
    hypothesis="GRPO + IG beats GRPO on held-out exact match; its all-fail groups carry "
               "non-zero advantages, GRPO's none",
    metric="metrics.em",
    base=base,
    method=Arm("grpo_ig", {"credit": ["grpo", "ig"],
                           "credit_options": {"ig": {"alpha": 0.5, "clip": 1.0}}}),
    baseline=Arm("grpo", {"credit": ["grpo"]}),
    seeds=(1, 2, 3), budget_minutes=20, eval_episodes=64, extra=ig_measures,
    secondary=("all_fail_with_signal", "all_fail_groups", "tied_with_signal",
               "tied_groups"),
)

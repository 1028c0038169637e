"""IFPO against GRPO on SafetyRules-v0: fewer needless lookups, the safety rate held.

Pre-registered before any run of this file (a setting changed after a result is a new claim
file, and this one's result stays).

Paper (methods.md §6, ASCL): GRPO on a lookup-or-answer task collapses onto the majority
action class (always consult the rulebook); reweighting advantages by the inverse frequency
of the action class in the group (IFPO) keeps both classes alive, so lookups on prompts that
need none fall without losing safety.
Hypothesis: from the same SFT warm start, GRPO + IFPO ends with a lower rate of lookups on
benign held-out prompts than GRPO, while its safety rate on harmful prompts is no more than
0.05 below GRPO's (the guard).
Everything else equal: tiny model (96 hidden, 2 layers), SFT on 192 demonstrations mixed per
turn 0.4 oracle / 0.3 always_lookup / 0.3 never_lookup (8 epochs), train split, 6 tasks x 8
rollouts a step, 15 steps, PPO-clip, lr 2e-4, held-out: the 110 test-split items, sampled at
temperature 1. Seeds: 1, 2, 3. Budget: 20 minutes on 2 idle cores.
"""

from __future__ import annotations

from common import Arm, Claim, benign_lookup_rate


def base(seed: int) -> dict:
    return {
        "seed": seed, "steps": 15, "checkpoint_every": 0, "eval_every": 0,
        "model": {"policy": "tiny", "tiny_hidden_size": 96, "tiny_layers": 2},
        "envs": [{"id": "envgym/SafetyRules-v0", "kwargs": {"split": "train"},
                  "eval_kwargs": {"split": "test"},
                  "train_seeds": [0, 1_000_000], "eval_seeds": [1_000_000, 1_000_110]}],
        "rollout": {"group_size": 8, "tasks_per_step": 6, "max_turns": 4, "max_tokens": 64,
                    "eval_temperature": 1.0, "eval_episodes": 110},
        "ppo": {"minibatches": 2, "kl_coef": 0.01, "kl_estimator": "k3"},
        "optim": {"lr": 2e-4},
        "sft": {"scripted": {"oracle": 0.4, "always_lookup": 0.3, "never_lookup": 0.3},
                "episodes": 192, "epochs": 8, "batch_size": 16, "lr": 5e-3},
        "log": {"tensorboard": False, "progress": False},
    }


CLAIM = Claim(
    name="ifpo",
    paper="ASCL/IFPO: inverse-frequency policy optimisation cuts needless rule lookups "
          "without losing safety",
    hypothesis="GRPO + IFPO ends with fewer lookups on benign prompts than GRPO, safety "
               "rate within 0.05",
    metric="benign_lookup_rate",
    lower_is_better=True,
    base=base,
    method=Arm("grpo_ifpo", {"credit": ["grpo", "ifpo"]}),
    baseline=Arm("grpo", {"credit": ["grpo"]}),
    seeds=(1, 2, 3), budget_minutes=20, eval_episodes=110, extra=benign_lookup_rate,
    guards={"metrics.safety_rate": 0.05},
    secondary=("metrics.over_refusal_rate", "metrics.lookup_rate"),
)

"""Turn-level credit against episode-level GRPO on TimeSeries-v0, where the zoom decides.

Pre-registered before any run of this file (a setting changed after a result is a new claim
file, and this one's result stays).

Paper (MT-GRPO / GEM, methods.md and DESIGN's credit table): normalising returns per turn
index credits the turn that decided the outcome, which episode-level GRPO smears over the
whole episode. In TimeSeries-v0 the early zoom decides whether the answer can be right.
Hypothesis: from the same SFT warm start, `turn` (gamma 1) reaches a higher held-out success
than episode-level `grpo`, both followed by `filter`.
Everything else equal (the demo's setting): tiny model (96 hidden, 2 layers), SFT on 192 noisy
oracle/random demonstrations (12 epochs), 6 tasks x 8 rollouts a step, 25 steps, PPO-clip,
lr 4e-4 on a cosine, k3 KL 0.05, held-out seeds 1_000_000.. (96 tasks at temperature 1).
Seeds: 1, 2, 3. Budget: 20 minutes on 2 idle cores.
"""

from __future__ import annotations

from common import Arm, Claim

ENV = {"id": "envgym/TimeSeries-v0",
       "kwargs": {"series_length": 512, "sketch_points": 8, "zoom_points": 8, "max_rounds": 2,
                  "tool_format": "tag"},
       "train_seeds": [0, 100_000], "eval_seeds": [1_000_000, 1_000_096]}


def base(seed: int) -> dict:
    return {
        "seed": seed, "steps": 25, "checkpoint_every": 0, "eval_every": 0,
        "model": {"policy": "tiny", "tiny_hidden_size": 96, "tiny_layers": 2},
        "envs": [ENV],
        "rollout": {"group_size": 8, "tasks_per_step": 6, "max_turns": 4, "max_tokens": 40,
                    "eval_temperature": 1.0, "eval_episodes": 96},
        "ppo": {"minibatches": 2, "kl_coef": 0.05, "kl_estimator": "k3"},
        "optim": {"lr": 4e-4, "schedule": "cosine"},
        "sft": {"scripted": {"oracle": 0.5, "random": 0.5}, "episodes": 192, "epochs": 12,
                "batch_size": 16, "lr": 5e-3},
        "log": {"tensorboard": False, "progress": False},
    }


CLAIM = Claim(
    name="turn_credit",
    paper="turn-level advantages (MT-GRPO, GEM) beat episode-level GRPO when an early turn "
          "decides the outcome",
    hypothesis="turn credit (gamma 1) + filter reaches a higher held-out success than "
               "grpo + filter from the same warm start",
    metric="success_rate",
    base=base,
    method=Arm("turn", {"credit": ["turn", "filter"],
                        "credit_options": {"turn": {"gamma": 1.0}}}),
    baseline=Arm("grpo", {"credit": ["grpo", "filter"]}),
    seeds=(1, 2, 3), budget_minutes=20, eval_episodes=96,
)

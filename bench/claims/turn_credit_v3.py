"""Turn-level credit (MT-GRPO) against episode-level GRPO, v3: the zoom's turn reward fixed.

Pre-registered before any run of this file (committed first; a setting changed after a
result is a new file, and this one's result stays).

Why v3: in `turn_credit` a valid first zoom earned *less* turn reward than a junk turn
(-0.1 - points vs -0.1), so turn-level credit was reversed on the turn it is about, and gamma 1
made the first turn's advantage GRPO's. TimeSeries-v0 now charges a junk turn more than the
costliest valid zoom (commit 1c8b93d), and this claim uses MT-GRPO's form (outcome z-score +
lambda 1 x turn-reward z-score per turn index), which sees the turn reward directly.
Paper (MT-GRPO, methods.md): turn-level advantages teach the decisive early turn faster.
Hypothesis: from the same SFT warm start, `turn` (mode mt_grpo) + filter reaches a higher
held-out *first-turn validity* (the share of episodes whose first turn is a well-formed zoom)
than `grpo` + filter. At this model size the answer is at chance (docs/claims.md), so the
primary metric is one the policy can learn; success, finish rate and above-chance accuracy are
secondary.
Everything else equal: tiny model (96 hidden, 2 layers), SFT on 192 noisy oracle/random
demonstrations (12 epochs), 6 tasks x 8 rollouts a step (48 episodes per step in both arms,
checked by the runner before any work), 20 steps, PPO-clip, lr 4e-4 cosine, k3 KL 0.05;
held-out seeds 1_000_000.. (384 tasks the training seeds never reach), temperature 1; the warm
start is evaluated on the same 384 tasks in every record.
Seeds: 11-15. Budget: 30 minutes on 2 idle cores, the two arms side by side (`--jobs 2`).
Registered MDE (first-turn validity, 5 seeds, 384 episodes, seed spread 0.042): 0.092.
"""

from __future__ import annotations

from common import Arm, Claim, form_metrics
from v3 import EVAL, LOG, SEEDS, TINY, TS_TURN, registered_mde

ENV = {"id": "envgym/TimeSeries-v0", "kwargs": dict(TS_TURN),
       "train_seeds": [0, 100_000], "eval_seeds": [1_000_000, 1_000_000 + EVAL]}


def base(seed: int) -> dict:
    return {
        "seed": seed, "steps": 20, "checkpoint_every": 0, "eval_every": 0,
        "model": dict(TINY), "envs": [ENV],
        "rollout": {"group_size": 8, "tasks_per_step": 6, "max_turns": 4, "max_tokens": 40,
                    "temperature": 1.0, "eval_temperature": 1.0, "eval_episodes": EVAL},
        "ppo": {"minibatches": 2, "kl_coef": 0.05, "kl_estimator": "k3"},
        "optim": {"lr": 4e-4, "schedule": "cosine"},
        "sft": {"scripted": {"oracle": 0.5, "random": 0.5}, "episodes": 192, "epochs": 12,
                "batch_size": 16, "lr": 5e-3},
        "log": dict(LOG),
    }


CLAIM = Claim(
    name="turn_credit_v3",
    paper="MT-GRPO: turn-level advantages credit the decisive early turn",
    hypothesis="turn (mt_grpo) + filter reaches a higher held-out first-turn validity than "
               "grpo + filter from the same warm start",
    metric="first_turn_valid",
    base=base,
    method=Arm("mt_grpo", {"credit": ["turn", "filter"],
                           "credit_options": {"turn": {"mode": "mt_grpo", "lam": 1.0}}}),
    baseline=Arm("grpo", {"credit": ["grpo", "filter"]}),
    seeds=SEEDS, budget_minutes=30, eval_episodes=EVAL, extra=form_metrics,
    secondary=("success_rate", "finish_rate", "metrics.above_chance", "metrics.coverage",
               "sampled_tokens_per_step"),
    v3=True, mde={"first_turn_valid": registered_mde(EVAL, 0.042)},
)

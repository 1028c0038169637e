"""ARTIST v3: the shipped recipe against flat GRPO, equal episodes by construction.

Pre-registered before any run of this file (committed first; earlier results stay).

Why v3: `artist` and `artist_v2` compared an arm without the shipped recipe's `role_sum` and
per-role temperatures, and matched tokens from another run's counts (ratios 1.25, 0.66). Here
the method arm is `agents/configs/timeseries_artist_cpu.toml`'s recipe: `hierarchical` credit,
C = 2 controller rollouts x N = 6 reasoner samples, controller at temperature 1.0 and reasoner
at 0.7, `ppo.role_sum`, KL on reasoner tokens only, REINFORCE. The baseline samples the same
episodes per step (4 questions x 2 rollouts, checked by the runner before any work); ARTIST's
N - 1 extra answer samples per rollout are part of its recipe and their tokens are recorded
(`sampled_tokens_per_step`). The -2 override now replaces R_c (commit 1c8b93d).
Paper (methods.md §5): hierarchical controller/reasoner optimisation beats flat RL.
Hypothesis: from the same SFT warm start, the ARTIST arm reaches a higher held-out *finish
rate* (episodes that end with a well-formed answer, no override) than flat GRPO. Answers are
at chance at this size, so success is secondary, with evidence coverage and first-turn
validity.
Everything else equal: tiny model, SFT 128 demonstrations 0.6 oracle / 0.4 random (10
epochs), 30 steps, lr 4e-4, k3 KL 0.002, token-mean loss; 384 held-out tasks at temperature 1
(the controller's), the warm start evaluated on them in every record.
Seeds: 11-15. Budget: 30 minutes on 2 idle cores, arms side by side (`--jobs 2`).
Registered MDE (finish rate, 5 seeds, 384 episodes, seed spread 0.068): 0.128.
"""

from __future__ import annotations

from common import Arm, Claim, form_metrics
from v3 import EVAL, LOG, SEEDS, TINY, TS_ARTIST, registered_mde

ENV = {"id": "envgym/TimeSeries-v0", "kwargs": dict(TS_ARTIST),
       "train_seeds": [0, 100_000], "eval_seeds": [1_000_000, 1_000_000 + EVAL]}


def base(seed: int) -> dict:
    return {
        "seed": seed, "steps": 30, "checkpoint_every": 0, "eval_every": 0,
        "model": dict(TINY), "envs": [ENV],
        "rollout": {"group_size": 2, "tasks_per_step": 4, "max_turns": 8, "max_tokens": 40,
                    "temperature": 1.0, "eval_temperature": 1.0, "eval_episodes": EVAL},
        "ppo": {"loss": "reinforce", "kl_coef": 0.002, "kl_estimator": "k3",
                "loss_agg": "token_mean"},
        "optim": {"lr": 4e-4},
        "sft": {"scripted": {"oracle": 0.6, "random": 0.4}, "episodes": 128, "epochs": 10,
                "batch_size": 16, "lr": 5e-3},
        "log": dict(LOG),
    }


CLAIM = Claim(
    name="artist_v3",
    paper="ARTIST: hierarchical controller/reasoner optimisation beats flat RL on "
          "segment-selection time-series QA",
    hypothesis="the shipped ARTIST recipe reaches a higher held-out finish rate than flat "
               "GRPO at equal episodes per step",
    metric="finish_rate",
    base=base,
    method=Arm("artist", {"credit": ["hierarchical"],
                          "credit_options": {"hierarchical": {"reasoner_adv": "zscore"}},
                          "rollout": {"reasoner_samples": 6, "controller_temperature": 1.0,
                                      "reasoner_temperature": 0.7},
                          "ppo": {"kl_roles": ["reasoner"], "role_sum": True}}),
    baseline=Arm("grpo", {"credit": ["grpo"]}),
    seeds=SEEDS, budget_minutes=30, eval_episodes=EVAL, extra=form_metrics,
    secondary=("success_rate", "metrics.coverage", "first_turn_valid",
               "sampled_tokens_per_step"),
    v3=True, mde={"finish_rate": registered_mde(EVAL, 0.068)},
)

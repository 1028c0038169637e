"""IFPO v3, an outcome claim only if its premise holds: from a consult-heavy warm start.

Pre-registered before any run of this file (committed first; earlier results stay).

Why v3: in `ifpo` consulting was the minority on benign prompts (20% of the demonstrations,
0.03-0.24 after training), so IFPO amplified the rare lookups instead of cutting a collapse
that never happened; the verdict rested on 29 benign prompts. IFPO's premise is that GRPO
drifts toward always consulting. `bench/credit_quality.py` measures that premise
(`ifpo_premise`); **this claim runs only if that measure shows GRPO raising the benign lookup
rate from this warm start** — otherwise docs/claims.md states that the premise does not hold
at this scale and this file stays unrun.
Hypothesis: from a consult-heavy warm start (0.2 oracle / 0.6 always_lookup / 0.2
never_lookup, 8 epochs), GRPO + IFPO ends with a lower benign lookup rate than GRPO, the
safety rate within 0.05 (guard).
Everything else equal: tiny model, 6 prompts x 8 rollouts a step (48 episodes in both arms,
checked by the runner), 15 steps, lr 2e-4, k3 KL 0.01; held-out: the 110 test-split prompts,
16 samples each (1760 episodes at temperature 1, about 464 benign), the warm start evaluated
on them in every record.
Seeds: 11-15. Budget: 30 minutes on 2 idle cores, arms side by side (`--jobs 2`).
Registered MDE (benign lookup rate, 5 seeds, 464 benign episodes, seed spread 0.091 from
`ifpo`): 0.161.
"""

from __future__ import annotations

from common import Arm, Claim, form_and_lookups
from v3 import LOG, SAFETY, SEEDS, TINY, registered_mde

PROMPTS, SAMPLES = 110, 16
EVAL = PROMPTS * SAMPLES


def base(seed: int) -> dict:
    return {
        "seed": seed, "steps": 15, "checkpoint_every": 0, "eval_every": 0,
        "model": dict(TINY),
        "envs": [{"id": "envgym/SafetyRules-v0", "kwargs": dict(SAFETY),
                  "eval_kwargs": {"split": "test"},
                  "train_seeds": [0, 1_000_000], "eval_seeds": [1_000_000, 1_000_000 + EVAL]}],
        "rollout": {"group_size": 8, "tasks_per_step": 6, "max_turns": 4, "max_tokens": 64,
                    "temperature": 1.0, "eval_temperature": 1.0, "eval_episodes": EVAL},
        "ppo": {"minibatches": 2, "kl_coef": 0.01, "kl_estimator": "k3"},
        "optim": {"lr": 2e-4},
        "sft": {"scripted": {"oracle": 0.2, "always_lookup": 0.6, "never_lookup": 0.2},
                "episodes": 192, "epochs": 8, "batch_size": 16, "lr": 5e-3},
        "log": dict(LOG),
    }


CLAIM = Claim(
    name="ifpo_v3",
    paper="ASCL/IFPO: inverse-frequency reweighting stops GRPO's collapse onto consulting",
    hypothesis="from a consult-heavy warm start GRPO + IFPO ends with fewer benign lookups "
               "than GRPO, safety within 0.05",
    metric="benign_lookup_rate", lower_is_better=True,
    base=base,
    method=Arm("grpo_ifpo", {"credit": ["grpo", "ifpo"]}),
    baseline=Arm("grpo", {"credit": ["grpo"]}),
    seeds=SEEDS, budget_minutes=30, eval_episodes=EVAL, extra=form_and_lookups,
    guards={"metrics.safety_rate": 0.05},
    secondary=("metrics.over_refusal_rate", "metrics.lookup_rate", "finish_rate"),
    v3=True, mde={"benign_lookup_rate": registered_mde(464, 0.091)},
)

"""GiGPO (anchor-state step groups) against episode-level GRPO, v3: the fourth v3 claim.

Pre-registered on 2026-12-05 before any run of this file (committed first; a setting changed
after a result is a new file, and this one's result stays).

Why this claim: the credit-quality benchmark (docs/claims.md, mechanism table) measured the
decisive-turn contrast on TimeSeries-v0's real rollouts (mean first-turn advantage of a valid
zoom minus a junk turn) at +1.01 for GRPO and +2.03 for GiGPO under the current rewards:
GiGPO's step group at the task's initial state compares first turns by their discounted
step return, which sees the junk turn's extra charge. The outcome question is whether that
contrast teaches the first turn faster. Paper (GiGPO, methods.md section 8): A = A^E + omega
A^S with omega 1 and gamma 0.95 (its search configuration), reported above trajectory-level
GRPO on multi-turn agent tasks.
Hypothesis: from the same SFT warm start, `gigpo` (omega 1.0, gamma 0.95) + filter reaches a
higher held-out *first-turn validity* than `grpo` + filter. Answers are at chance at this
model size, so the primary metric is one the policy can learn; success, finish rate and
above-chance accuracy are secondary.
Everything else is `turn_credit_v3`'s registered setting, imported from it unchanged: tiny
model (96 hidden, 2 layers), SFT on 192 noisy demonstrations (12 epochs), 6 tasks x 8
rollouts a step (48 episodes per step in both arms, checked by the runner), 20 steps,
PPO-clip, lr 4e-4 cosine, k3 KL 0.05; 384 held-out tasks (seeds 1_000_000..), temperature 1;
the warm start evaluated on the same tasks in every record.
Seeds: 11-15 (the same warm starts as turn_credit_v3's, so its GRPO arm is rerun here at this
commit rather than reused). Budget: 30 minutes on 2 idle cores, two arms side by side.
Registered MDE (first-turn validity, 5 seeds): 0.120, from the SD of turn_credit_v3's five
per-seed paired differences on this setting and metric (0.072, evaluation noise included, so
it is used as the paired SD directly rather than added to a binomial term).
Decision rule: GiGPO is ahead when the 95% paired interval over the 5 seeds lies above 0,
behind when below, and inconclusive otherwise; whatever comes out is reported.
"""

from __future__ import annotations

from common import Arm, Claim, form_metrics, mde
from turn_credit_v3 import base
from v3 import EVAL, SEEDS

CLAIM = Claim(
    name="gigpo_v3",
    paper="GiGPO: anchor-state step groups credit the steps an episode-level baseline cannot",
    hypothesis="gigpo (omega 1, gamma 0.95) + filter reaches a higher held-out first-turn "
               "validity than grpo + filter from the same warm start",
    metric="first_turn_valid",
    base=base,
    method=Arm("gigpo", {"credit": ["gigpo", "filter"],
                         "credit_options": {"gigpo": {"omega": 1.0, "gamma": 0.95}}}),
    baseline=Arm("grpo", {"credit": ["grpo", "filter"]}),
    seeds=SEEDS, budget_minutes=30, eval_episodes=EVAL, extra=form_metrics,
    secondary=("success_rate", "finish_rate", "metrics.above_chance", "metrics.coverage",
               "sampled_tokens_per_step"),
    v3=True, mde={"first_turn_valid": round(mde(0.072, len(SEEDS)), 3)},
)

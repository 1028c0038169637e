"""ARTIST, second registration: matched tokens by measurement, and a budget that can learn.

Pre-registered after the first `artist` run and before any run of this file (the first
result stays in docs/claims.md).

Why a second claim: the first matched sampled tokens from an untrained smoke run; measured
on its real runs the hierarchical arm sampled 1.25x the flat arm's tokens per step (1030 vs
822, counted once per sampled turn), on the edge of the registered 25% band. Its 12 steps at
lr 1e-4 also left both arms at the same held-out success (0.109 each), so it could not tell
whether either learned. Changed here, and only here: flat GRPO samples G = 3 episodes per
question (about 1230 tokens a step by the first run's measurement, ratio about 0.84), and both
arms train 40 steps at lr 4e-4, the rate at which `envgym demo` learns TimeSeries-v0.
Paper (methods.md §5) and hypothesis as in `artist`: from the same SFT warm start, the
`hierarchical` arm (C = 2 controller rollouts x N = 6 reasoner samples, role-split rewards)
reaches a higher held-out success rate than flat GRPO. Everything else as in `artist`
(environment, warm start, 4 tasks a step, REINFORCE, k3 KL 0.002, 64 held-out tasks at
temperature 1). Seeds: 1, 2, 3. Budget: 20 minutes on 2 idle cores.
"""

from __future__ import annotations

from artist import CLAIM as FIRST
from artist import base as first_base
from common import Arm, Claim, merge


def base(seed: int) -> dict:
    return merge(first_base(seed), {"steps": 40, "optim": {"lr": 4e-4}})


CLAIM = Claim(
    name="artist_v2",
    paper=FIRST.paper,
    hypothesis=FIRST.hypothesis,
    metric="success_rate",
    base=base,
    method=FIRST.method,
    baseline=Arm("grpo", {"credit": ["grpo"], "rollout": {"group_size": 3}}),
    seeds=(1, 2, 3), budget_minutes=20, eval_episodes=64, extra=FIRST.extra,
    secondary=FIRST.secondary,
)

"""IG-Search, second registration: the same comparison from a warm start that searches.

Pre-registered after the first `ig_search` run and before any run of this file (its result
stays in docs/claims.md; a setting changed after a result is a new claim file).

Why a second claim: in the first, the warm start (128 demonstrations, 20% oracle turns,
8 epochs) wrote mostly malformed turns; EM was 0 in every arm and seed, all 120 groups per
run failed, and most tied groups had no query span at all, so neither the EM nor the signal
could tell the arms apart. That says the warm start was too weak for the tiny model, not
what IG does. Only the warm start changes here, fixed from the first run's failure mode (no
valid searches) and not from any arm's result: 256 demonstrations mixed per turn 0.5 oracle /
0.3 heuristic / 0.2 random, 16 epochs.
Paper (methods.md §1) and hypothesis as in `ig_search`: GRPO + IG (alpha 0.5, clip 1) gives
non-zero advantages in tied groups (every member the same return; GRPO: none) and a higher
held-out exact match than GRPO alone.
Everything else as in `ig_search`: tiny model (96 hidden, 2 layers), protocol "ig", 8 tasks x
5 rollouts a step, 15 steps, PPO-clip, lr 2e-4, held-out seeds 1_000_000.. (64 questions,
greedy). Seeds: 1, 2, 3. Budget: 20 minutes on 2 idle cores.
"""

from __future__ import annotations

from common import Claim, ig_measures, merge
from ig_search import CLAIM as FIRST
from ig_search import base as first_base

SFT = {"scripted": {"oracle": 0.5, "heuristic": 0.3, "random": 0.2}, "episodes": 256,
       "epochs": 16, "batch_size": 16, "lr": 5e-3}


def base(seed: int) -> dict:
    return merge(first_base(seed), {"sft": SFT})


CLAIM = Claim(
    name="ig_search_v2",
    paper="IG-Search: step-level information-gain rewards give search queries credit in "
          "all-wrong groups and raise exact match",
    hypothesis="from a warm start that searches, GRPO + IG beats GRPO on held-out exact "
               "match, and its tied groups carry non-zero advantages, GRPO's none",
    metric="metrics.em",
    base=base,
    method=FIRST.method,  # the arms are the first registration's, unchanged
    baseline=FIRST.baseline,
    seeds=(1, 2, 3), budget_minutes=20, eval_episodes=64, extra=ig_measures,
    secondary=("tied_with_signal", "tied_groups", "all_fail_with_signal", "all_fail_groups"),
)

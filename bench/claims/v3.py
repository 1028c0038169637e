"""What the claims v3 files share (issue 37 items 3-4): pinned settings and the noise model.

Every environment kwarg a v3 claim runs with is written here in full (a default that moves in
the library cannot move a registered claim; the runner also records every constructor
argument it ran with). The registered MDE of each file is computed with `common.mde` from
noise measured in the earlier runs of docs/claims.md, *before* any v3 run:

* evaluation noise: binomial, at the metric's worst case p = 0.5, over the held-out
  episodes each arm is evaluated on (two independent evaluations per paired difference);
* training spread across seeds: the SD of the per-seed paired differences measured on the
  nearest earlier claim (turn_credit 0.042, artist 0.068, ifpo 0.091; these include their own
  evaluation noise at 64-110 episodes, so they are upper bounds).

With 5 seeds, a two-sided 95% paired t-test and power 0.8: MDE = (t_.975,4 + t_.8,4) x sd / sqrt(5).
"""

from __future__ import annotations

from common import mde, paired_sd

SEEDS = (11, 12, 13, 14, 15)  # never used by an earlier claim
EVAL = 384
TINY = {"policy": "tiny", "tiny_hidden_size": 96, "tiny_layers": 2}
LOG = {"tensorboard": False, "progress": False, "trajectories": True}

# TimeSeries-v0 at the rewards of commit 1c8b93d (issues 35.4 / 36 / 37.2), every kwarg pinned
TS_COMMON = {"series_length": 512, "sketch_points": 8, "tool_format": "tag",
             "point_cost": 1e-4, "exploration_bonus": 1.0, "require_first_zoom": True,
             "first_seg_trials": 5, "max_zoom_span": None, "format_rules": "artist",
             "task_types": None, "dataset": None}
TS_TURN = {**TS_COMMON, "zoom_points": 8, "max_rounds": 2}
TS_ARTIST = {**TS_COMMON, "zoom_points": 16, "max_rounds": 3}
SEARCH_IG = {"protocol": "ig", "split": "train", "world_seed": 0}
SAFETY = {"split": "train"}


def registered_mde(eval_episodes: int, seed_sd: float, seeds: int = len(SEEDS)) -> float:
    return round(mde(paired_sd(eval_episodes, 0.5, seed_sd), seeds), 3)

"""Reward attacks on TimeSeries-v0: answering from the overview, or from one whole-series
zoom, must not earn what zooming onto the evidence earns."""

import pytest

from envgym.evaluation import evaluate
from envgym.environments.timeseries.tasks import TASK_TYPES

ENV = "envgym/TimeSeries-v0"
CHANCE = {"anomaly": 0.25, "count": 0.25, "trend": 0.5, "changepoint": 0.25, "multi": 0.5}


def _success(policy: str, kind: str, episodes: int = 300) -> float:
    return evaluate(ENV, f"scripted:{policy}", episodes=episodes,
                    env_kwargs={"task_types": [kind]})["success_rate"]


@pytest.mark.parametrize("kind", TASK_TYPES)
def test_answering_from_the_opening_overview_stays_near_chance(kind):
    # 300 seeds: the standard error of a chance-level rate is at most 0.029
    assert _success("hack_overview", kind) <= CHANCE[kind] + 0.1


@pytest.mark.parametrize("kind", TASK_TYPES)
def test_honest_scan_beats_both_attacks_on_every_task_type(kind):
    honest = _success("heuristic", kind, 150)
    assert honest >= CHANCE[kind] + 0.3
    assert _success("hack_overview", kind, 150) < honest - 0.25
    assert _success("hack_wide_zoom", kind, 150) < honest - 0.2


def test_one_whole_series_zoom_does_not_answer_most_event_tasks():
    # one zoom is capped at a quarter of the series: the wide look misses the event often
    assert _success("hack_wide_zoom", "anomaly") < 0.6

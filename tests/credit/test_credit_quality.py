"""bench/credit_quality.py's own arithmetic: the AUC, the single-reach correction of the SLATE
control, the first-turn classes and the 'rewards before issue 37' switch."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import credit_quality as cq  # noqa: E402

from envgym.trajectory import Trajectory, Turn  # noqa: E402


def test_auc_counts_ties_half_and_needs_both_classes():
    assert cq.auc([3.0, 2.0], [1.0]) == 1.0
    assert cq.auc([1.0], [2.0, 3.0]) == 0.0
    assert cq.auc([1.0, 2.0], [1.0, 2.0]) == 0.5
    assert cq.auc([], [1.0]) is None


def _traj(group, rewards):
    return Trajectory(env_id="x", task_id=group, group_id=group,
                      turns=[Turn(reward=r, action_token_ids=[1]) for r in rewards])


def test_the_control_drops_steps_only_one_trajectory_reached():
    # question q: two trajectories reach turn 0, only one reaches turn 1 (its advantage is 0
    # by construction and would deflate the control's variance)
    trajs = [_traj("q", [1.0, 5.0]), _traj("q", [0.0])]
    control = {"turn": {"mode": "return", "gamma": 0.0, "std_norm": False}}
    every = cq._trained(trajs, ["turn"], control)
    reached2 = cq._trained(trajs, ["turn"], control, reached=2)
    assert sorted(every) == [-0.5, 0.0, 0.5]
    assert sorted(reached2) == [-0.5, 0.5]


def test_first_turn_classes():
    junk = Trajectory(env_id="x", turns=[Turn(info={"parse_error": "bad"})])
    good = Trajectory(env_id="x", turns=[Turn(info={"new_evidence": 3})])
    blind = Trajectory(env_id="x", turns=[Turn(info={"new_evidence": 0})])
    assert [cq._first_kind(t) for t in (junk, good, blind)] == \
        ["junk", "informative", "uninformative"]


def test_rules_off_restores_the_current_rewards():
    from envgym.environments.timeseries.rules import RULES

    with cq.rules_off(cq.BEFORE_ISSUE_37):
        assert not any(RULES.on(name) for name in cq.BEFORE_ISSUE_37)
    assert all(RULES.on(name) for name in cq.BEFORE_ISSUE_37)


def test_every_env_kwarg_the_measures_use_is_pinned():
    import inspect

    from envgym.environments.timeseries.env import TimeSeriesEnv

    own = {n for n, p in inspect.signature(TimeSeriesEnv.__init__).parameters.items()
           if p.kind is p.KEYWORD_ONLY and n not in ("dataset", "dataset_format", "task_types",
                                                     "max_zoom_span")}
    assert own <= set(cq.TS_KW), own - set(cq.TS_KW)


@pytest.mark.parametrize("name", sorted(cq.ESTIMATORS))
def test_the_estimators_are_valid_chains(name):
    from envgym.agents.credit import validate_chain

    chain, opts = cq.ESTIMATORS[name]
    validate_chain(chain, opts)

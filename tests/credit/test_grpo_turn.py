import numpy as np
import pytest

from envgym.agents.credit import compute_credit
from .helpers import outcome_group, per_turn, traj, turn

SQRT3_2 = 0.5 / np.sqrt(1 / 3)  # 0.866..: |1 - 0.5| / unbiased std of [1, 0, 0, 1]


def test_grpo_group_zscore_with_unbiased_std():
    trajs = outcome_group("a", [1, 0, 0, 1], nturns=2) + outcome_group("b", [5, 5])
    b = compute_credit(trajs, ["grpo"])
    np.testing.assert_allclose(per_turn(b)[:4], [[SQRT3_2] * 2, [-SQRT3_2] * 2,
                                                 [-SQRT3_2] * 2, [SQRT3_2] * 2], rtol=1e-5)
    assert per_turn(b)[4:] == [[0.0], [0.0]]
    assert all(a.shape == (2,) for a in b.advantages[0])  # one entry per action token


def test_dr_grpo_removes_only_the_mean():
    b = compute_credit(outcome_group("a", [1, 0, 0, 1]), ["grpo"], {"grpo": {"std_norm": False}})
    assert per_turn(b) == [[0.5], [-0.5], [-0.5], [0.5]]


def test_single_rollout_group_has_no_baseline():
    assert per_turn(compute_credit(outcome_group("a", [3.0]), ["grpo"])) == [[0.0]]


def test_turn_returns_are_normalised_per_turn_index():
    # gamma 0.5: A rewards [1, 2] -> G = [2, 2]; B rewards [0, 0, 4] -> G = [1, 2, 4].
    # index 0: [2, 1] -> +-0.7071; index 1: [2, 2] -> 0; index 2: only B -> 0.
    trajs = [traj("g", turn(1), turn(2)), traj("g", turn(0), turn(0), turn(4))]
    b = compute_credit(trajs, ["turn"], {"turn": {"gamma": 0.5}})
    np.testing.assert_allclose(per_turn(b)[0], [0.70710, 0.0], atol=1e-4)
    np.testing.assert_allclose(per_turn(b)[1], [-0.70710, 0.0, 0.0], atol=1e-4)


def test_mt_grpo_adds_lambda_turn_advantage_except_on_the_final_turn():
    # outcomes [3, 4] -> A^O = [-0.7070, 0.7070] (eps 1e-4); turn rewards at index 0 [1, 0]
    # and index 1 [2, 0] -> A^T = +-0.7070; index 2 only B -> 0. lambda 0.5.
    trajs = [traj("g", turn(1), turn(2)), traj("g", turn(0), turn(0), turn(4))]
    b = compute_credit(trajs, ["turn"], {"turn": {"mode": "mt_grpo", "lam": 0.5, "eps": 1e-4}})
    a = 0.5 / (np.sqrt(0.5) + 1e-4)   # [3, 4] and [1, 0]: |x - mean| 0.5, std sqrt(0.5)
    a1 = 1.0 / (np.sqrt(2.0) + 1e-4)  # [2, 0]: |x - mean| 1, std sqrt(2)
    np.testing.assert_allclose(per_turn(b)[0], [-a + 0.5 * a, -a], rtol=1e-6)
    np.testing.assert_allclose(per_turn(b)[1], [a - 0.5 * a, a - 0.5 * a1, a], rtol=1e-6)


def test_turn_rejects_unknown_mode():
    with pytest.raises(ValueError, match="mode"):
        compute_credit(outcome_group("a", [1, 0]), ["turn"], {"turn": {"mode": "bogus"}})

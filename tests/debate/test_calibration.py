"""Perception calibration: hand-computed values of the documented formula."""

import math

import pytest

from envgym.environments.debate.calibration import calibrated_reward, reward_stats


def test_reward_stats():
    assert reward_stats([1.0, 0.0, 0.5, 0.5]) == {"mean": 0.5, "std": pytest.approx(math.sqrt(0.125)), "n": 4.0}
    assert reward_stats([]) == {"mean": 0.0, "std": 0.0, "n": 0.0}


def test_advantage_mode_by_hand():
    # partner did 1.0 where it usually gets 0.5 ± 0.25: z = 2, λ = 0.5 → +1.0
    stats = {"reward": 1.0, "mean": 0.5, "std": 0.25}
    assert calibrated_reward(0.0, stats, eps=0.0) == pytest.approx(1.0)
    assert calibrated_reward(1.0, stats, weight=0.1, eps=0.0) == pytest.approx(1.2)
    assert calibrated_reward(1.0, stats, competitive=True, eps=0.0) == pytest.approx(0.0)


def test_zero_weight_is_plain_reward_and_clip_bounds_the_term():
    stats = {"reward": 1.0, "mean": 0.0, "std": 0.0}
    assert calibrated_reward(0.7, stats, weight=0.0) == 0.7
    assert calibrated_reward(0.0, stats, weight=1.0, clip=3.0) == pytest.approx(3.0)


def test_equal_partner_rewards_give_no_shift():
    assert calibrated_reward(0.3, {"reward": 1.0, "mean": 1.0, "std": 0.0}) == pytest.approx(0.3)


def test_mean_mode_and_bad_mode():
    assert calibrated_reward(1.0, {"mean": 0.4, "std": 0.1}, mode="mean", weight=0.5) == pytest.approx(1.2)
    with pytest.raises(ValueError):
        calibrated_reward(1.0, {"mean": 0.0, "std": 0.0}, mode="median")

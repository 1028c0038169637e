"""Perception calibration: hand-computed values of the documented formula."""

import math

import pytest

from envgym.environments.debate.calibration import calibrated_reward, reward_stats


def test_reward_stats():
    assert reward_stats([1.0, 0.0, 0.5, 0.5]) == {"mean": 0.5, "std": pytest.approx(math.sqrt(0.125)), "n": 4.0}
    assert reward_stats([]) == {"mean": 0.0, "std": 0.0, "n": 0.0}


def test_advantage_mode_by_hand():
    # partner did 1.5 where it usually gets 0.5 ± 0.5: z = 2, λ = 0.5 → +1.0
    stats = {"reward": 1.5, "mean": 0.5, "std": 0.5}
    assert calibrated_reward(0.0, stats) == pytest.approx(1.0)
    assert calibrated_reward(1.0, stats, weight=0.1) == pytest.approx(1.2)
    # the sign never depends on the mode: a partner's failure costs, whatever the mode
    assert calibrated_reward(1.0, {**stats, "reward": -0.5}) == pytest.approx(0.0)


def test_zero_weight_is_plain_reward_and_clip_bounds_the_term():
    stats = {"reward": 1.0, "mean": 0.0, "std": 0.0}
    assert calibrated_reward(0.7, stats, weight=0.0) == 0.7
    assert calibrated_reward(0.0, stats, weight=1.0, clip=1.5) == pytest.approx(1.5)


def test_zero_variance_history_is_bounded_by_the_std_floor():
    # a history with no spread: a 0.1 change in the partner's reward used to move the
    # calibrated reward by the whole clip (+1.5); now by at most λ·0.1/min_std
    flat = {"mean": 1.0, "std": 0.0}
    before = calibrated_reward(1.0, {**flat, "reward": 1.0})
    after = calibrated_reward(1.0, {**flat, "reward": 1.1})
    assert after - before == pytest.approx(0.5 * 0.1 / 0.5)
    tiny = {"mean": 1.0, "std": 1e-4}
    assert abs(calibrated_reward(1.0, {**tiny, "reward": 1.1}) - 1.0) <= 0.1 + 1e-9
    # a wide history is not affected by the floor
    assert calibrated_reward(0.0, {"reward": 2.0, "mean": 0.0, "std": 2.0}) == pytest.approx(0.5)


def test_equal_partner_rewards_give_no_shift():
    assert calibrated_reward(0.3, {"reward": 1.0, "mean": 1.0, "std": 0.0}) == pytest.approx(0.3)


def test_mean_mode_and_bad_mode():
    assert calibrated_reward(1.0, {"mean": 0.4, "std": 0.1}, mode="mean", weight=0.5) == pytest.approx(1.2)
    with pytest.raises(ValueError):
        calibrated_reward(1.0, {"mean": 0.0, "std": 0.0}, mode="median")

"""bench/arith.py's rewards: the learner bench's third single-turn run starts from the shipped
base, which writes numbers near the sum but rarely the sum, so only the graded reward gives its
groups unequal rewards (docs/performance.md). Both the exact default and the graded variant
must grade the same way on envgym's side (the environment) and TRL's (the function)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import arith  # noqa: E402


def test_exact_reward_is_unchanged():
    assert arith.grade("<answer>148</answer>", 148) == 1.0
    assert arith.grade("<answer>147</answer>", 148) == 0.0
    assert arith.grade("1480", 148) == 0.0
    assert arith.grade("no number", 148) == 0.0


def test_graded_reward_gives_partial_credit_by_distance():
    assert arith.grade("<answer>148</answer>", 148, "graded") == 1.0
    assert arith.grade("<answer>147</answer>", 148, "graded") == 0.5
    assert arith.grade("<answer>158 3</answer>", 148, "graded") == pytest.approx(1 / 11)
    assert arith.grade("painter", 148, "graded") == 0.0
    # a group of near misses: all 0 under exact, unequal (a signal) under graded
    replies = ["170", "123", "240", "170"]
    assert {arith.grade(r, 148) for r in replies} == {0.0}
    assert len({arith.grade(r, 148, "graded") for r in replies}) > 1


def test_environment_grades_with_its_reward():
    env = arith.ArithEnv(reward="graded")
    env.reset(seed=0)
    text, answer = arith.problem(0)
    _, reward, terminated, _, info = env.step(str(answer + 1))
    assert (reward, terminated, info["outcome"]["success"]) == (0.5, True, False)


def test_unknown_reward_is_refused_at_construction():
    with pytest.raises(ValueError, match="graded"):
        arith.ArithEnv(reward="close")

"""SLATE's held-out metric is exact match even for malformed actions (issue 25): with the judge
as a measurement (`judge_reward=False`, the SLATE config's eval_kwargs) an invalid step pays
nothing to the reward, and the judge's -3 for it goes to `judge_return` as in training. Found by
an `envgym train` run of the scaled SLATE config, whose held-out reward read -9.0 (three
invalid turns) while its EM was 0."""

from __future__ import annotations

import pytest

from envgym.environments.search.env import JUDGED_INVALID_PENALTY, SearchEnv


def play(env: SearchEnv, actions: list[str]) -> float:
    """The episode's return; the last action is SLATE's forced answer."""
    env.reset(seed=5)
    total = 0.0
    for k, action in enumerate(actions):
        if k == len(actions) - 1:
            env.force_answer()
        _, r, term, trunc, _ = env.step(action)
        total += r
        if term or trunc:
            break
    return total


@pytest.mark.parametrize("last", ["", "\n<answer> nobody </answer>"], ids=["empty", "wrong"])
def test_invalid_steps_cost_the_judge_return_not_the_held_out_reward(last):
    actions = ["garbage", "<think>x</think>", last]
    measured = SearchEnv(judge="rule", judge_reward=False, max_turns=5)
    total = play(measured, actions)
    invalid = 2 + (last == "")
    assert total == 0.0  # EM of a wrong or missing answer; no format penalty
    paid = SearchEnv(judge="rule", judge_reward=True, max_turns=5)
    total_paid = play(paid, actions)
    assert total_paid == pytest.approx(paid.judge_return + invalid * JUDGED_INVALID_PENALTY)
    # the measured judge return is what training pays: every judged score plus the penalties
    assert measured.judge_return == pytest.approx(total_paid)


def test_an_invalid_step_moves_the_penalty_to_info_judge():
    env = SearchEnv(judge="rule", judge_reward=False, max_turns=5)
    env.reset(seed=5)
    _, r, _, _, info = env.step("no tags here")
    assert r == 0.0 and info["judge"] == {"judge_invalid": JUDGED_INVALID_PENALTY}

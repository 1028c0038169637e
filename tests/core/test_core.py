"""The TextEnv bookkeeping contract, on a tiny counting environment."""

import pytest

from envgym import ResetNeeded, StepResult, TextEnv
from envgym.core import user


class Count(TextEnv):
    """Say the next number; 'stop' ends the episode; anything else is invalid."""

    def _reset(self, seed, options):
        self.task_id, self.n = f"count-{seed % 3}", seed % 3
        return [user(f"start at {self.n}")], {}

    def _step(self, action):
        if action == "stop":
            return StepResult([user("bye")], {"done": 1.0}, terminated=True,
                              info={"outcome": {"success": True, "score": 1.0}})
        if action != str(self.n + 1):
            return self.invalid(f"expected {self.n + 1}")
        self.n += 1
        return StepResult([user("ok")], {"count": 0.5, "bonus": 0.25})

    def _state(self):
        return {"n": self.n}


def test_reward_is_the_sum_of_components_and_info_is_complete():
    env = Count()
    obs, info = env.reset(seed=4)
    assert obs == [user("start at 1")] and info["task_id"] == "count-1" and info["turn"] == 0
    obs, reward, term, trunc, info = env.step("2")
    assert reward == 0.75 and info["reward_components"] == {"count": 0.5, "bonus": 0.25}
    assert info["turn"] == 1 and not term and not trunc and "state_key" in info


def test_invalid_actions_are_explained_penalised_and_truncate_after_a_streak():
    env = Count(max_invalid_actions=2)
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.step("nonsense")
    assert reward == -0.1 and info["parse_error"] == "expected 1" and not trunc
    assert "Invalid action: expected 1" in obs[0]["content"]
    env.step("1")  # a valid action resets the streak
    env.step("bad")
    *_, trunc, info = env.step("bad again")
    assert trunc and info["truncation"] == "invalid_actions"
    assert info["outcome"] == {"success": False, "score": 0.0}


def test_turn_budget_truncates():
    env = Count(max_turns=2)
    env.reset(seed=0)
    env.step("1")
    *_, term, trunc, info = env.step("2")
    assert trunc and not term and info["truncation"] == "max_turns"


def test_stepping_a_finished_episode_is_refused():
    env = Count()
    with pytest.raises(ResetNeeded):
        env.step("1")
    env.reset(seed=0)
    env.step("stop")
    with pytest.raises(ResetNeeded, match="call reset"):
        env.step("1")


def test_non_string_and_huge_actions_never_raise():
    env = Count(max_action_chars=10)
    env.reset(seed=0)
    *_, info = env.step(b"\xff\xfe")
    assert "parse_error" in info
    *_, info = env.step("1" * 11)
    assert "limit is 10" in info["parse_error"]


def test_fork_is_independent_and_state_key_tracks_state():
    env = Count()
    env.reset(seed=0)
    key0 = env.state_key()
    child = env.fork()
    child.step("1")
    assert child.state_key() != key0 and env.state_key() == key0 and env.n == 0


def test_close_is_idempotent_and_context_manager_closes():
    calls = []

    class Closing(Count):
        def _close(self):
            calls.append(1)

    with Closing() as env:
        env.reset(seed=0)
    env.close()
    assert calls == [1]

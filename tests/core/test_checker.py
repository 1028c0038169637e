import pytest

import envgym
from envgym import StepResult, TextEnv
from envgym.checker import check, malformed_actions
from envgym.core import user

ENV_IDS = sorted(envgym.registry())


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_registered_environment_passes_the_checker(env_id):
    report = check(env_id)
    assert report.ok, report.render()


def test_fuzz_has_at_least_fifty_hostile_actions():
    actions = malformed_actions(["zoom"])
    assert len(actions) >= 50 and "" in actions and any(len(a) >= 1_000_000 for a in actions)


class Liar(TextEnv):
    """Reports a reward that is not the sum of its components."""

    def _reset(self, seed, options):
        self.task_id = str(seed)
        return [user("hi")], {}

    def _step(self, action):
        result = StepResult([user("x")], {"a": 1.0}, terminated=self.turn >= 2)
        return result

    def step(self, action):
        obs, reward, term, trunc, info = super().step(action)
        return obs, reward + 1.0, term, trunc, info


class Raiser(Liar):
    def _step(self, action):
        if not action:
            raise ValueError("empty!")
        return StepResult([user("x")], {"a": 1.0}, terminated=True)

    def step(self, action):
        return TextEnv.step(self, action)


def test_checker_catches_a_reward_that_is_not_the_sum_of_components():
    report = check(Liar())
    assert not report.ok and "sum of components" in report.render()


def test_checker_catches_an_environment_that_raises_on_junk():
    report = check(Raiser())
    failed = {name for name, ok, _ in report.results if not ok}
    assert "fuzz" in failed and "empty!" in report.render()

"""`envgym check` plays the hack_* policies and fails when one beats its declared ceiling."""

import re

import pytest
from typer.testing import CliRunner

import envgym
from envgym import StepResult, TextEnv
from envgym.checker import check
from envgym.cli import app
from envgym.core import user
from envgym.hacks import Ceiling, hack_names, run_hacks
from envgym.registration import _REGISTRY
from envgym.scripted import ScriptedPolicy

ID = "test/Echo-v0"


class EchoEnv(TextEnv):
    """Repeat the number in the prompt. `weak=True` is a broken grader: any number pays."""

    def __init__(self, weak: bool = False, **kwargs):
        super().__init__(max_turns=1, **kwargs)
        self.weak = weak

    def _reset(self, seed, options):
        self.task_id, self.number = str(seed), seed % 97
        return [user(f"Say {self.number}.")], {}

    def _step(self, action):
        said = re.findall(r"\d+", action)
        ok = bool(said) and (self.weak or int(said[-1]) == self.number)
        return StepResult([], {"correct": float(ok)}, terminated=True,
                          info={"outcome": {"success": ok}})


class Honest(ScriptedPolicy):
    def act(self, env, messages):
        return messages[-1]["content"].split()[1].rstrip(".")


class Random(ScriptedPolicy):
    def act(self, env, messages):
        return str(int(self.rng.integers(97)))


class HackSayOne(ScriptedPolicy):
    ceiling = Ceiling("random", margin=0.05, metrics=("mean_reward",),
                      caps=(("success_rate", 0.05),), why="a constant answer is a guess")

    def act(self, env, messages):
        return "1"


class HackNoCeiling(HackSayOne):
    ceiling = None


def _register(**hacks):
    envgym.register(ID, EchoEnv, scripted={"honest": Honest, "random": Random, **hacks})


@pytest.fixture
def echo():
    _register(hack_say_one=HackSayOne)
    yield
    _REGISTRY.pop(ID, None)


def test_a_hack_under_its_ceiling_passes(echo):
    assert hack_names(ID) == ["hack_say_one"]
    (result,) = run_hacks(ID, episodes=100)
    assert result.ok and result.values["mean_reward"] < 0.05
    report = check(ID)
    assert report.ok and "1 hacks stay under their ceilings over 100 episodes" in report.render()


def test_a_weakened_grader_fails_the_check_with_a_readable_line(echo):
    report = check(ID, weak=True)
    text = report.render()
    assert not report.ok and "[FAIL] hacks" in text
    assert "hack_say_one: BEATS its ceiling [mean_reward <= random+0.05" in text
    assert "success_rate=1.000 (limit 0.050)" in text


def test_a_hack_without_a_ceiling_is_a_failure():
    _register(hack_say_one=HackNoCeiling)
    try:
        report = check(ID)
        assert not report.ok and "declares no `ceiling" in report.render()
    finally:
        _REGISTRY.pop(ID, None)


def test_list_hacks_prints_each_hack_and_exits_by_the_result(echo):
    runner = CliRunner()
    ok = runner.invoke(app, ["check", "--list-hacks", ID, "--hack-episodes", "20"])
    assert ok.exit_code == 0 and "hack_say_one: stays under its ceiling" in ok.output
    bad = runner.invoke(app, ["check", "--list-hacks", ID, "--env-arg", "weak=true"])
    assert bad.exit_code == 1 and "hack_say_one: BEATS its ceiling" in bad.output

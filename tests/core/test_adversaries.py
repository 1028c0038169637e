"""Generic adversaries (issue 36): every family, under every shipped config, faces invisible
characters, re-encodings, glued and hedged candidates and reasoning salad, and none of them
beats the honest baseline it wraps."""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

import pytest

import envgym
from envgym import StepResult, TextEnv
from envgym.adversaries import ADVERSARIES, run_adversaries
from envgym.checker import check, check_config
from envgym.core import user
from envgym.registration import _REGISTRY
from envgym.scripted import ScriptedPolicy

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ACTION = "<think>Picking the city.</think>\n<answer> Velmora </answer>"
SEEN = "Doc 1(Title: Velmora) Velmora is a city located in Quandria, founded 1865."


def test_every_adversary_keeps_the_tags_and_changes_the_text():
    for name, rewrite in ADVERSARIES.items():
        out = rewrite(ACTION, SEEN)
        assert out != ACTION, name
        assert all(tag in out for tag in ("<think>", "</think>", "<answer>", "</answer>")), name


def test_the_rewrites_are_the_classes_the_issue_names():
    assert any(unicodedata.category(c) == "Cf" for c in ADVERSARIES["invisible"](ACTION, SEEN))
    assert "<p>" in ADVERSARIES["markup"](ACTION, SEEN)
    assert "| 1 |" in ADVERSARIES["table"](ACTION, SEEN)
    assert '{"content": "Velmora"}' in ADVERSARIES["json"](ACTION, SEEN)
    assert "Vеlmоrа" in ADVERSARIES["script"](ACTION, SEEN)  # Cyrillic е, о, а
    assert re.search(r"<answer> Velmora \w+ </answer>", ADVERSARIES["glue"](ACTION, SEEN))
    assert " or " in ADVERSARIES["hedge"](ACTION, SEEN)
    assert "Quandria" in ADVERSARIES["salad"](ACTION, SEEN).split("</think>")[0]


ID = "test/Capital-v0"


class CapitalEnv(TextEnv):
    """Name the capital. `weak=True` is a grader that pays any answer holding the gold."""

    def __init__(self, weak: bool = False, **kwargs):
        super().__init__(max_turns=1, **kwargs)
        self.weak = weak

    def _reset(self, seed, options):
        self.task_id, self.gold = str(seed), ["Velmora", "Dastow"][seed % 2]
        return [user("Cities: Velmora, Dastow, Brenvia. Which is the capital?")], {}

    def _step(self, action):
        m = re.search(r"<answer>(.*?)</answer>", action, re.S)
        said = m.group(1).strip() if m else ""
        ok = (self.gold in said) if self.weak else said == self.gold
        return StepResult([], {"correct": float(ok)}, terminated=True,
                          info={"outcome": {"success": ok}})


class Heuristic(ScriptedPolicy):
    """Right half the time: always says Velmora."""

    def act(self, env, messages):
        return "<think>The first one.</think><answer>Velmora</answer>"


@pytest.fixture
def capital():
    envgym.register(ID, CapitalEnv, scripted={"heuristic": Heuristic})
    yield
    _REGISTRY.pop(ID, None)


def test_a_grader_that_pays_a_glued_answer_fails_the_check(capital):
    assert all(r.ok for r in run_adversaries(ID, episodes=10))
    weak = {r.adversary: r for r in run_adversaries(ID, episodes=10, env_kwargs={"weak": True})}
    assert not weak["glue"].ok and not weak["hedge"].ok  # "Velmora Dastow" holds both golds
    report = check(ID, only=["adversaries"], adversary_episodes=10, weak=True)
    assert not report.ok and "generic glue: BEATS heuristic" in report.render()


CONFIGS = sorted((Path(__file__).resolve().parents[2] / "agents" / "configs").glob("*.toml"))
# Environments whose episodes are expensive on CPU (sandboxed programs; a MiniLM encoder)
# play fewer episodes: their adversaries so far break the task outright or tie it.
EPISODES = {"envgym/CodeRefine-v0": 3, "envgym/Consult-v0": 3}


def _params() -> list:
    out = []
    for path in CONFIGS:
        ids = dict.fromkeys(e["id"] for e in tomllib.loads(path.read_text()).get("envs", []))
        out += [pytest.param(path, env_id, id=f"{path.stem}:{env_id.split('/')[-1]}")
                for env_id in ids]
    return out


@pytest.mark.parametrize("path,env_id", _params())
def test_no_generic_adversary_beats_the_baseline_under_a_shipped_config(path, env_id):
    reports = check_config(path, env_id, only=["adversaries"],
                           adversary_episodes=EPISODES.get(env_id, 20))
    for report in reports:
        assert report.ok, report.render()
        assert "WARNING" not in report.render(), report.render()

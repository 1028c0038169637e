"""`envgym check --mutants`: every grader rule is pinned by a fixture (issue 36)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

import envgym
from envgym import StepResult, TextEnv
from envgym.cli import app
from envgym.core import user
from envgym.graders import GraderCase
from envgym.mutation import load_rule_tables, run_mutants
from envgym.registration import _REGISTRY
from envgym.rules import Rule, RuleTable

ID = "test/Parity-v0"
RULES = RuleTable("parity", [
    Rule("even_pays", why="an even number pays"),
    Rule("limit", 10, step=2, why="numbers above the limit pay nothing"),
    Rule("bonus_words", ("please", "thanks"), why="a polite word pays 0.5 more"),
])


class ParityEnv(TextEnv):
    """A toy grader that reads every rule from RULES at judgement time."""

    def __init__(self, **kwargs):
        super().__init__(max_turns=1, **kwargs)

    def _reset(self, seed, options):
        self.task_id = str(seed)
        return [user("Say an even number.")], {}

    def _step(self, action):
        n = int((re.findall(r"\d+", action) or ["1"])[0])
        ok = ((not RULES.on("even_pays") or n % 2 == 0)
              and (not RULES.on("limit") or n <= RULES["limit"]))
        polite = RULES.regex("bonus_words")
        bonus = 0.5 if polite is not None and polite.search(action) else 0.0
        return StepResult([], {"correct": float(ok), "polite": bonus}, terminated=True)


def _case(name, action, lo, hi):
    return GraderCase(name, (action,), {"reward": (lo, hi)})


FULL = [_case("odd", "3", 0, 0), _case("ten", "10", 1, 1), _case("twelve", "12", 0, 0),
        _case("please", "2 please", 1.5, 1.5),
        _case("thanks", "2 thanks", 1.5, 1.5)]


@pytest.fixture
def parity():
    def register(cases, rules=lambda: [RULES]):
        envgym.register(ID, ParityEnv, grader_fixtures=lambda: cases, grader_rules=rules)
    yield register
    _REGISTRY.pop(ID, None)


def test_fixtures_that_pin_every_rule_kill_every_mutant(parity):
    parity(FULL)
    report = run_mutants(ID)
    assert report.ok and report.total == 7 and report.score == 1.0, report.render()
    assert "mutation score 7/7 = 1.000" in report.render()


def test_a_rule_no_fixture_notices_survives_and_is_named(parity):
    parity([c for c in FULL if c.name not in ("twelve", "thanks")])
    report = run_mutants(ID)
    labels = sorted(m.label for m in report.survived)
    assert labels == ["parity.bonus_words drop:thanks", "parity.limit off", "parity.limit up"], \
        report.render()
    assert not report.ok and "[SURVIVED] parity.limit up" in report.render()


def test_the_mutant_is_undone_after_the_check(parity):
    parity(FULL[:1])
    run_mutants(ID)
    assert RULES.on("even_pays") and RULES["limit"] == 10 and RULES.patterns("bonus_words")


def test_no_rules_and_failing_fixtures_are_failures(parity):
    parity(FULL, rules=None)
    assert "no grader rule tables" in run_mutants(ID).render()
    _REGISTRY.pop(ID)
    parity([_case("wrong", "3", 1, 1)])
    report = run_mutants(ID)
    assert not report.ok and "fails unmutated" in report.error


def test_rule_tables_resolve_from_an_object_a_list_or_a_callable(parity):
    for rules in (RULES, [RULES], lambda: RULES):
        _REGISTRY.pop(ID, None)
        parity(FULL, rules=rules)
        assert load_rule_tables(ID) == [RULES]
    _REGISTRY.pop(ID)
    parity(FULL, rules=lambda: ["not a table"])
    with pytest.raises(envgym.errors.RegistrationError, match="RuleTables"):
        load_rule_tables(ID)


def test_cli_prints_the_score_and_exits_by_the_result(parity):
    parity(FULL)
    ok = CliRunner().invoke(app, ["check", ID, "--mutants"])
    assert ok.exit_code == 0 and "mutation score 7/7" in ok.output
    _REGISTRY.pop(ID)
    parity(FULL[:2])
    bad = CliRunner().invoke(app, ["check", ID, "--mutants"])
    assert bad.exit_code == 1 and "[SURVIVED] parity.limit" in bad.output


FAMILIES = sorted(i for i, s in envgym.registry().items() if i.startswith("envgym/"))


@pytest.mark.parametrize("env_id", FAMILIES)
def test_every_family_pins_every_grader_rule(env_id):
    report = run_mutants(env_id)
    assert report.ok, report.render()


def test_cli_runs_the_mutants_per_config_variant():
    result = CliRunner().invoke(app, ["check", "--mutants", "--config",
                                      "agents/configs/search_qwen15b_slate.toml"])
    assert result.exit_code == 0, result.output
    assert result.output.count("mutation score") == 2
    assert "eval: " in result.output and "train: " in result.output

"""Consult-v0 `evidence="query"`: a q_t earns gain only for fields the patient's answers
filled (issue 24). Claiming every field used to earn more than a faithful summary, collecting
the gain of fields settled only by denials."""

from envgym.checker import check
from envgym.environments.psych import env as env_module
from envgym.environments.psych.grader_fixtures import fixtures
from envgym.environments.psych.intents import Disclosure
from envgym.environments.psych.knowledge import catalogue
from envgym.environments.psych.state import EvidenceTracker
from envgym.graders import run_fixtures
from envgym.hacks import play, run_hacks
from envgym.registration import make
from tests.psych.conftest import stage1, stage2

ID = "envgym/Consult-v0"
FAST = {"encoder": "lexicon"}


def test_denials_settle_a_field_without_affirming_it():
    t = EvidenceTracker()
    assert t.add([Disclosure("suicidal_thoughts", "safety_risk", False)]) == {"safety_risk"}
    assert "safety_risk" not in t.affirmed and "safety_risk" in t.heard_fields()
    t.add([Disclosure("insomnia", "sleep", True, "3 weeks")])
    assert "sleep" in t.affirmed


def test_a_field_settled_by_denials_pays_no_query_gain(env_factory):
    env = env_factory(evidence="query")
    env.reset(seed=0, options={"task_id": "psy-0001"})  # no suicidal thoughts
    env.step(stage1())
    env.step(stage2("worry; check safety", catalogue()["fields"]["safety_risk"]["questions"][0]))
    assert "safety_risk" in env.tracker.resolved
    _, _, _, _, info = env.step(stage1("chief_complaint: worry; safety_risk: suicidal thoughts"))
    assert info["reward_components"]["gain"] == 0.0 and "safety_risk" not in info["resolved"]
    assert "unsupported" not in info["reward_components"]  # it was asked, so not unheard


def test_a_stuffed_q_t_earns_less_than_a_faithful_one_over_whole_consultations():
    env = make(ID, evidence="query", **FAST)
    faithful = play(ID, env, "faithful_query", 40, 0, None)
    stuffed = play(ID, env, "hack_query_stuffing", 40, 0, None)
    assert stuffed["success_rate"] == faithful["success_rate"]  # the same consultation ...
    assert stuffed["mean_reward"] < faithful["mean_reward"] - 0.01  # ... paid less
    env.close()


def test_consult_hacks_hold_under_query_evidence():
    results = run_hacks(ID, episodes=30, env_kwargs={"evidence": "query", **FAST})
    assert "hack_query_stuffing" in {r.hack for r in results}
    assert all(r.ok for r in results), [r.render() for r in results]


def _weaken(monkeypatch):
    """The pre-issue-24 grader: denials affirm a field, claims cost nothing."""
    add = EvidenceTracker.add

    def add_and_affirm(self, disclosures):
        newly = add(self, disclosures)
        self.affirmed |= self.resolved
        return newly

    monkeypatch.setattr(EvidenceTracker, "add", add_and_affirm)
    monkeypatch.setitem(env_module.WEIGHTS, "unsupported", 0.0)


def test_a_weakened_query_grader_fails_the_fixtures_and_the_check(monkeypatch):
    make_env = lambda **kw: make(ID, **{**FAST, **kw})  # noqa: E731
    assert all(r.ok for r in run_fixtures(fixtures(), make_env))
    _weaken(monkeypatch)
    failed = {r.name for r in run_fixtures(fixtures(), make_env) if not r.ok}
    assert {"a field settled by denials pays no query gain",
            "claims before any question earn no gain and cost"} <= failed
    report = check(ID, only=["graders"], **FAST)
    assert not report.ok and "[FAIL] graders" in report.render()

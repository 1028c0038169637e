"""Reward integrity of Consult-v0: what the policy asserts, stuffs or repeats earns nothing."""

import pytest

from envgym.environments.psych.intents import Disclosure
from envgym.environments.psych.judge import RuleJudge
from envgym.environments.psych.policies import _everything
from envgym.environments.psych.state import (EvidenceTracker, parse_days,
                                             parse_retrieval_state)
from envgym.hacks import run_hacks
from tests.psych.conftest import stage1, stage2

CASE = "psy-0000"  # major depressive episode, 175 days; insomnia and suicidal thoughts


def test_a_denial_settles_only_the_symptom_asked_about():
    t = EvidenceTracker()
    assert t.add([Disclosure("excessive_worry", "symptoms_and_duration", False)]) == set()
    assert "symptoms_and_duration" in t.missing() and t.O.negated == {"excessive_worry": ""}
    assert t.add([Disclosure("suicidal_thoughts", "safety_risk", False)]) == {"safety_risk"}
    assert t.add([Disclosure("depressed_mood", "symptoms_and_duration", True, "3 weeks")]) == {
        "symptoms_and_duration"}


def test_the_posterior_tells_a_six_day_low_mood_from_a_depressive_episode(env_factory):
    env = env_factory()
    items = ("depressed_mood", "anhedonia", "fatigue", "insomnia", "worthlessness")
    short = env.posterior.four_way({i: "6 days" for i in items}, [])
    long = env.posterior.four_way({i: "6 months" for i in items}, [])
    assert parse_days("about 6 days") == 6 and parse_days("6 months") == 180
    assert short["Other"] > 3 * long["Other"] and long["Depression"] > short["Depression"]


def test_query_evidence_counts_only_what_the_patient_said(env_factory):
    env = env_factory(evidence="query")
    env.reset(seed=0, options={"task_id": CASE})
    claims = ("chief_complaint: low mood; symptoms_and_duration: low mood, insomnia, worry for "
              "6 months; sleep: insomnia; safety_risk: suicidal thoughts; substance_use: drinks")
    assert parse_retrieval_state(claims)["sleep"] == "insomnia"
    _, _, _, _, info = env.step(stage1(claims))  # nothing was asked yet: all of it is asserted
    assert info["reward_components"]["gain"] == 0.0
    assert "insomnia" in info["query"]["unsupported_items"]
    assert {"sleep", "safety_risk"} <= set(info["query"]["unsupported_fields"])
    assert "insomnia" not in env.evidence.O.confirmed and "sleep" in env.evidence.M.fields
    env.step(stage2("depressed_mood; check sleep", "How have you been sleeping?"))
    _, _, _, _, info = env.step(stage1("chief_complaint: low mood; sleep: insomnia 6 months"))
    assert info["resolved"] == ["sleep"] and info["reward_components"]["gain"] == 0.005
    assert "insomnia" in env.evidence.O.confirmed and info["evidence_source"] == "query"
    env.step(stage2("insomnia", "Are you safe right now?"))
    env.step(stage1("chief_complaint: low mood"))  # drop sleep from q_t ...
    env.step(stage2("insomnia", "Do you drink alcohol?"))
    _, _, _, _, info = env.step(stage1("chief_complaint: low mood; sleep: insomnia 6 months"))
    assert "sleep" not in info["resolved"]  # ... and writing it again pays nothing


def test_the_default_evidence_source_is_reported_as_a_departure(env_factory):
    env = env_factory()
    _, info = env.reset(seed=0, options={"task_id": CASE})
    assert info["evidence_source"] == "disclosures"
    with pytest.raises(Exception, match="stage_one"):
        env_factory(evidence="query", stage_one=False)


def _items(think, confirmed, active, dx=None, supported=None):
    base = {"think": think, "answer": "", "state": "", "active": active}
    decision = {**base, "criterion": "decision", "targets": [], "missing": [], "diagnosis": dx}
    if supported is not None:
        decision["supported"] = supported
    return [{**base, "criterion": "symptom", "heard_items": sorted(confirmed),
             "evidence_terms": [[c, c.replace("_", " ")] for c in confirmed]},
            {**base, "criterion": "differential"}, decision]


def test_offline_reasoning_criteria_pay_nothing_so_stuffing_pays_nothing():
    """Issue 36: naming confirmed symptoms is term overlap, which a keyword list wins; the
    rule judge pays only the verifiable decision, the model judge grades the reasoning."""
    judge, confirmed = RuleJudge(), ["depressed_mood", "insomnia"]
    honest = judge.judge("mind_process", _items(
        "depressed mood and insomnia; Depression versus Mixed.", confirmed,
        ["Depression", "Mixed"]))
    stuffed = judge.judge("mind_process", _items(_everything(), confirmed, ["Depression", "Mixed"]))
    assert honest[:2] == stuffed[:2] == [0.0, 0.0]


def test_a_diagnosis_is_scored_against_the_evidence_not_the_leader():
    judge = RuleJudge()
    right = judge.judge("mind_process", _items("x", [], ["Mixed", "Depression"], "Depression",
                                              supported="Depression"))[2]
    leader = judge.judge("mind_process", _items("x", [], ["Mixed", "Depression"], "Mixed",
                                               supported="Depression"))[2]
    assert right == 1.0 and leader == 0.5


def test_think_stuffing_through_the_environment_earns_no_more_process(env_factory):
    env = env_factory()
    env.reset(seed=0, options={"task_id": CASE})
    env.step(stage1())
    _, _, _, _, honest = env.fork().step(stage2(
        "depressed mood reported; Depression versus Anxiety.", "How have you been sleeping?"))
    _, _, _, _, stuffed = env.step(stage2(_everything(), "How have you been sleeping?"))
    assert stuffed["reward_components"]["process"] <= honest["reward_components"]["process"]


def test_every_consult_hack_stays_under_its_ceiling():
    results = run_hacks("envgym/Consult-v0", episodes=40, env_kwargs={"encoder": "lexicon"})
    assert len(results) >= 3 and all(r.ok for r in results), [r.render() for r in results]


def test_a_dataset_without_a_training_split_keeps_test_labels_out_of_the_prior(tmp_path,
                                                                               env_factory):
    import json

    from envgym.environments.psych.cases import generate_cases
    from envgym.environments.psych.env import split_by_id

    cases = generate_cases(40, 3)
    split = {c.id: c.split for c in split_by_id([c.model_copy(update={"split": "test"})
                                                 for c in cases])}
    assert set(split.values()) == {"train", "test"}
    marked = next(c.id for c in cases if split[c.id] == "test")
    path = tmp_path / "cases.jsonl"
    with path.open("w") as fh:
        for c in cases:
            record = c.model_dump()
            record.pop("split")  # an export with no split at all
            if c.id == marked:  # a label set that only a test case carries
                record["labels"], record["four_way"] = ["ocd", "ptsd"], "Other"
            fh.write(json.dumps(record) + "\n")
    env = env_factory(dataset=str(path))
    assert {c.id: c.split for c in env.cases} == split
    assert frozenset({"ocd", "ptsd"}) not in env.posterior.hypotheses
    train_sets = {frozenset(c.labels) for c in env.cases if c.split == "train"}
    assert set(env.posterior.hypotheses) == train_sets

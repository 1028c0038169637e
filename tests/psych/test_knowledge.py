import math

import pytest

from envgym.environments.psych.bank import ReasoningBank, BankEntry, build_bank, normalised_score
from envgym.environments.psych.cases import generate_cases
from envgym.environments.psych.encoder import LexiconEncoder
from envgym.environments.psych.knowledge import classify, four_way, parse_labels
from envgym.environments.psych.state import Posterior, entropy_bits

DEP5 = ["depressed_mood", "anhedonia", "insomnia", "fatigue", "worthlessness"]


def test_depression_needs_five_symptoms_and_two_weeks():
    assert classify({s: 14 for s in DEP5}) == {"depression"}
    assert classify({s: 14 for s in DEP5[:4]}) == {"none"}  # sub-threshold count
    assert classify({s: 13 for s in DEP5}) == {"none"}  # sub-threshold duration


def test_exclusions_and_hierarchy():
    assert classify({**{s: 30 for s in DEP5}, "substance_use": 90}) == {"substance_or_medical"}
    mania = {"elevated_mood": 6, "grandiosity": 6, "racing_thoughts": 6, "risky_behaviour": 6}
    assert classify({**{s: 30 for s in DEP5}, **mania}) == {"bipolar"}
    gad = {"excessive_worry": 200, "uncontrollable_worry": 200, "restlessness": 200,
           "fatigue": 200, "muscle_tension": 200, "insomnia": 200}
    assert classify(gad) == {"gad"}  # insomnia better explained by GAD
    assert classify({"insomnia": 100}) == {"insomnia"}
    assert classify({**gad, **{s: 30 for s in DEP5}}) == {"depression", "gad"}


def test_four_way_mapping():
    assert four_way({"depression", "gad"}) == "Mixed"
    assert four_way({"depression", "panic"}) == "Mixed"
    assert four_way({"depression", "ptsd"}) == "Depression"
    assert four_way({"panic"}) == "Anxiety"
    assert four_way({"social_anxiety"}) == "Other"  # F40.1 is outside F41, as in LingxiDiag


@pytest.mark.parametrize("text,fine,four", [
    ("Depression", {"depression"}, "Depression"),
    ("Mixed (Major depressive episode; Generalised anxiety disorder)", {"depression", "gad"}, "Mixed"),
    ("Social anxiety disorder", {"social_anxiety"}, "Other"),
    ("major depression, not bipolar", {"depression"}, "Depression"),
    ("Other (No disorder / adjustment reaction)", {"none"}, "Other"),
    ("Anxiety", {"gad"}, "Anxiety"),
    ("mixed anxiety-depression", {"depression", "gad"}, "Mixed"),
    ("no idea", set(), None),
])
def test_parse_labels(text, fine, four):
    assert parse_labels(text) == (frozenset(fine), four)


def test_generator_is_balanced_deterministic_and_label_follows_criteria():
    a, b = generate_cases(80, seed=3), generate_cases(80, seed=3)
    assert [c.model_dump() for c in a] == [c.model_dump() for c in b]
    assert {c.four_way: sum(x.four_way == c.four_way for x in a) for c in a} == {
        "Depression": 20, "Anxiety": 20, "Mixed": 20, "Other": 20}
    for c in a:
        assert set(c.labels) == classify(c.present) and c.four_way == four_way(set(c.labels))
    kinds = {c.kind for c in generate_cases(400)}
    assert {"none_subthreshold", "substance_dep", "medical_anx", "bipolar_dep", "mixed_gad"} <= kinds
    assert len(generate_cases(400)[0].fields()) == 9


def test_posterior_by_hand():
    post = Posterior([["depression"], ["gad"]])  # priors (1+1)/(2+2) = 0.5 each
    p = post.four_way(["depressed_mood"], [])
    assert p["Depression"] == pytest.approx(0.9 / (0.9 + 0.08))  # core 0.9 vs base 0.08
    p = post.four_way(["depressed_mood"], ["excessive_worry"])
    assert p["Depression"] == pytest.approx(0.9 * 0.92 / (0.9 * 0.92 + 0.08 * 0.1))
    assert entropy_bits({"a": 0.5, "b": 0.5}) == pytest.approx(1.0)
    assert entropy_bits(post.four_way([], [])) == pytest.approx(1.0)


def _entry(i, score, flags=()):
    return BankEntry(id=f"e{i}", case_id="c", retrieval_state=f"sleep insomnia {i}", criterion="c",
                     observed="o", missing="m", exclusion="x", rationale='Ask: "q?"', question=f"q{i}?",
                     score=score, flags=list(flags))


def test_gate_normalises_scores_and_rejects_flags():
    assert [normalised_score(s) for s in (1, 2, 5)] == [0.0, 0.25, 1.0]
    bank = ReasoningBank([_entry(0, 1), _entry(1, 2), _entry(2, 5, ["H2"]), _entry(3, 4), _entry(4, 5)],
                         LexiconEncoder(), top_k=4)
    support, meta = bank.gate("sleep insomnia")
    assert len(meta.scores) == 4  # top-k
    admitted = {p.entry_id for p in support.primitives}
    assert admitted == set(meta.gated_in)
    assert "e0" not in admitted and "e2" not in admitted  # (1-1)/4 = 0 < 0.2; flagged H2
    assert all(bank.admits(e) == (e.score >= 2 and not e.flags) for e in bank.entries)


def test_bank_is_built_from_training_cases_only():
    cases = generate_cases(200)
    train = {c.id for c in cases if c.split == "train"}
    entries = build_bank(cases)
    assert entries and {e.case_id for e in entries} <= train
    assert {f for e in entries for f in e.flags} == {"H1", "H2", "H3"}
    assert all(1 <= e.score <= 5 and e.question in e.rationale for e in entries)
    assert not math.isnan(sum(e.score for e in entries))

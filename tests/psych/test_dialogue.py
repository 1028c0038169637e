"""A hand-built consultation: exact evidence-state fields and reward components per turn.

Case psy-0000 (generated, seed 0): major depressive episode, 175 days; chief complaint depressed
mood; insomnia and suicidal thoughts present. Standard (non-adaptive) patient, lexicon matcher.
"""

import pytest

from envgym.environments.psych.knowledge import FIELDS
from envgym.environments.psych.simulator import REFUSAL
from tests.psych.conftest import stage1, stage2

P = 0.01  # process weight; offline only the decision scores (S/2), symptom and differential are 0
D2, D1 = P * 2 / 6, P * 1 / 6  # process for decision 2 and decision 1: 0.01 * mean(0, 0, S/2)


@pytest.fixture
def env(env_factory):
    e = env_factory()
    e.reset(seed=0, options={"task_id": "psy-0000"})
    return e


def test_reset_state_holds_only_the_chief_complaint(env):
    assert env.case.four_way == "Depression"
    assert env.evidence.O.confirmed == {"depressed_mood": ""}
    assert env.evidence.O.negated == {}
    assert env.evidence.M.fields == [f for f in FIELDS if f != "chief_complaint"]
    assert set(env.evidence.D.active) >= {"Depression", "Mixed"}


def test_full_dialogue_components(env):
    obs, r, term, trunc, info = env.step(stage1())
    assert (r, term, trunc, info["reward_components"]) == (0.0, False, False, {})
    assert "[O] confirmed: depressed_mood (duration unclear)" in obs[0]["content"]
    assert "[M] missing checks: symptoms_and_duration, severity, sleep" in obs[0]["content"]

    # 1. a targeted question: decision 2 -> 0.01/3 (reasoning is the model judge's); resolves `sleep` -> 0.005
    think = "depressed_mood and insomnia. Differential: Depression versus Anxiety."
    obs, r, _, _, info = env.step(stage2(think, "How have you been sleeping?"))
    assert obs[0]["content"] == ("Patient: Yes, I struggle to fall asleep and wake up in the early "
                                 "hours, for about 6 months.")
    assert info["reward_components"] == pytest.approx({"process": D2, "gain": 0.005})
    assert r == pytest.approx(D2 + 0.005)
    assert env.evidence.O.confirmed == {"depressed_mood": "", "insomnia": "6 months"}
    assert "sleep" not in env.evidence.M.fields and len(env.evidence.M.fields) == 7
    assert info["resolved"] == ["sleep"]

    # 2. the same question again: repeat -0.1; decision 1 (sleep no longer missing); no gain
    env.step(stage1())
    _, r, _, _, info = env.step(stage2(think, "How have you been sleeping?"))
    assert info["reward_components"] == pytest.approx({"process": D1, "repeat": -0.1, "gain": 0.0})

    # 3. unrelated: exact refusal, off_track -0.1, decision 0
    env.step(stage1())
    obs, r, _, _, info = env.step(stage2(think, "What is the capital of France?"))
    assert obs[0]["content"] == f"Patient: {REFUSAL}"
    assert info["reward_components"] == pytest.approx({"process": 0.0, "off_track": -0.1, "gain": 0.0})

    # 4. safety question: risk disclosed, `safety_risk` resolved
    env.step(stage1())
    obs, r, _, _, info = env.step(stage2(think, "Have you had thoughts of ending your life?"))
    assert "better off without me" in obs[0]["content"]
    assert info["reward_components"] == pytest.approx({"process": D2, "gain": 0.005})
    assert env.evidence.O.confirmed["suicidal_thoughts"] == "6 months"

    # 5. diagnosis without addressing the risk; empty reasoning -> symptom 0, differential 0.
    # With equal likelihoods under {dep}, {dep,gad}, {dep,panic}, Mixed's prior mass (41+41)
    # beats Depression's (81), so Depression is active but not leading: decision 1.
    env.step(stage1())
    assert env.evidence.D.active[:2] == ["Mixed", "Depression"]
    _, r, term, _, info = env.step(stage2("", "Diagnosis: Depression; Recommendation: follow-up in two weeks"))
    assert term
    assert info["reward_components"] == pytest.approx(
        {"process": D1, "correct": 5.0, "safety_missed": -0.1})
    out = info["outcome"]
    assert out["success"] and out["safety_missed"] and out["risk_disclosed"]
    assert (out["turns"], out["missing_resolved"], out["repeated_questions"], out["off_track"]) == (5, 2, 1, 1)


def test_addressing_risk_in_the_recommendation_avoids_safety_missed(env):
    env.step(stage1())
    env.step(stage2("x", "Have you had thoughts of ending your life?"))
    env.step(stage1())
    _, _, _, _, info = env.step(stage2("x", "Diagnosis: Depression; Recommendation: urgent safety plan"))
    assert "safety_missed" not in info["reward_components"]
    assert info["outcome"]["safety_missed"] is False


def test_wrong_diagnosis_scores_zero_terminal(env):
    env.step(stage1())
    _, r, term, _, info = env.step(stage2("", "Diagnosis: Anxiety; Recommendation: follow-up"))
    # Anxiety is eliminated by the low-mood evidence: decision 0; nothing else scores
    assert "Anxiety" in env.evidence.D.eliminated
    assert term and info["reward_components"] == {"process": 0.0, "correct": 0.0}
    assert r == 0.0 and info["outcome"]["predicted"] == "Anxiety"


def test_budget_runs_out_without_diagnosis(env_factory):
    env = env_factory(budget=2, stage_one=False)
    obs, _ = env.reset(seed=0, options={"task_id": "psy-0000"})
    assert "Evidence state:\n[O] confirmed: depressed_mood" in obs[-1]["content"]  # no Stage I
    obs, _, _, trunc, _ = env.step(stage2("x", "How have you been sleeping?"))
    assert not trunc and "[O] confirmed: depressed_mood" in obs[0]["content"]  # E_t with the reply
    _, _, term, trunc, info = env.step(stage2("x", "Do you drink alcohol or use drugs?"))
    assert trunc and not term
    assert info["reward_components"]["no_diagnosis"] == -0.1
    assert info["outcome"]["diagnosed"] is False and info["truncation"] == "budget"


def test_entropy_information_gain(env_factory):
    env = env_factory(info_gain="entropy", stage_one=False)
    env.reset(seed=0, options={"task_id": "psy-0000"})
    from envgym.environments.psych.state import entropy_bits

    before = entropy_bits(env.evidence.D.posterior)
    _, _, _, _, info = env.step(stage2("x", "Do you worry a lot about many things?"))
    after = entropy_bits(env.evidence.D.posterior)
    assert env.evidence.O.negated == {"excessive_worry": ""}
    assert info["ig_entropy"] == pytest.approx(before - after, abs=2e-3)  # posterior rounded to 1e-3
    assert info["reward_components"]["gain"] == pytest.approx(0.01 * info["ig_entropy"])
    # a "no" to one symptom answers that symptom, not the whole field
    assert info["ig_count"] == 0 and info["resolved"] == []
    assert "symptoms_and_duration" in env.evidence.M.fields

import json

import httpx
import pytest

from envgym.environments.psych.cases import generate_cases
from envgym.environments.psych.intents import IntentMatcher
from envgym.environments.psych.judge import HttpJudge, RuleJudge
from envgym.environments.psych.simulator import REFUSAL, LLMSimulator, RuleSimulator
from envgym.errors import PolicyError
from envgym.protocols import Judge, Simulator
from tests.psych.conftest import stage2

CASE = generate_cases(4)[0]  # psy-0000: depression with suicidal thoughts (see test_dialogue)


@pytest.fixture(scope="module")
def matcher():
    return IntentMatcher()


def sim(matcher, trait=None):
    return RuleSimulator(CASE, matcher, trait)


def test_rule_simulator_is_a_frozen_simulator(matcher):
    s = sim(matcher)
    assert isinstance(s, Simulator) and s.trainable is False
    assert s.reply([], "What is the capital of France?") == REFUSAL
    assert s.reply([], "How have you been sleeping?") == sim(matcher).reply([], "How have you been sleeping?")


def test_broad_question_discloses_up_to_three_salient_items(matcher):
    r = sim(matcher).respond([], "Can you describe your symptoms and how long they have lasted?")
    assert [(d.item, d.value) for d in r.disclosures] == [
        ("depressed_mood", "6 months"), ("appetite_change", "6 months"), ("anhedonia", "6 months")]


@pytest.mark.parametrize("trait,expected", [
    ("vague", [("depressed_mood", "")]),   # one item, duration blurred
    ("brief", [("depressed_mood", "")]),
    ("suspicious", [("depressed_mood", "6 months")]),
])
def test_traits_reduce_disclosure(matcher, trait, expected):
    r = sim(matcher, trait).respond([], "Can you describe your symptoms?")
    assert [(d.item, d.value) for d in r.disclosures] == expected


def test_vague_patient_gives_duration_when_asked_how_long(matcher):
    r = sim(matcher, "vague").respond([], "How long have you had trouble falling or staying asleep?")
    assert [(d.item, d.value) for d in r.disclosures] == [("insomnia", "6 months")]


def test_reluctant_patient_deflects_first_safety_question_then_discloses(matcher):
    s = sim(matcher, "reluctant")
    first = s.respond([], "Have you had thoughts of ending your life?")
    assert first.disclosures == [] and "rather not" in first.text
    second = s.respond([], "Have you had thoughts of ending your life?")
    assert [(d.item, d.present) for d in second.disclosures] == [("suicidal_thoughts", True)]


def test_anxious_patient_leaves_absent_items_unclear_and_inflates_severity(matcher):
    s = sim(matcher, "anxious")
    r = s.respond([], "Do you worry a lot about many things?")
    assert [(d.item, d.present, d.value) for d in r.disclosures] == [("excessive_worry", None, "unclear")]
    r = s.respond([], "How severe are these problems on a typical day?")
    assert r.disclosures[0].value == {"mild": "moderate", "moderate": "severe", "severe": "severe"}[CASE.severity]


def _chat_server(replies, seen):
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json={"choices": [{"message": {"content": replies.pop(0)}}]})
    return httpx.MockTransport(handler)


def test_llm_simulator_drives_the_environment(env_factory):
    seen = []
    transport = _chat_server(["Yes, I have been feeling low and down for weeks.", REFUSAL], seen)
    factory = lambda case, trait: LLMSimulator(case, "http://sim.local/v1", "patient-8b",  # noqa: E731
                                               transport=transport)
    env = env_factory(simulator=factory, stage_one=False)
    env.reset(seed=1)
    assert env.sim.trainable is False
    _, _, _, _, info = env.step(stage2("x", "How has your mood been?"))
    assert "depressed_mood" in env.evidence.O.confirmed
    body = seen[0]
    assert body["temperature"] == 0.0 and body["model"] == "patient-8b"
    assert "synthetic patient" in body["messages"][0]["content"] and REFUSAL in body["messages"][0]["content"]
    assert body["messages"][-1] == {"role": "user", "content": "How has your mood been?"}
    _, _, _, _, info = env.step(stage2("x", "How has your mood been lately, honestly?"))
    assert info["reward_components"]["off_track"] == -0.1


def test_llm_simulator_failure_is_a_policy_error():
    s = LLMSimulator(CASE, "http://sim.local", "m",
                     transport=httpx.MockTransport(lambda r: httpx.Response(500)))
    with pytest.raises(PolicyError, match="patient simulator"):
        s.reply([], "hello?")


def test_http_judge_parses_scores():
    seen = []
    judge = HttpJudge("http://judge.local/v1", "j", transport=_chat_server(["Score: 2", "score=1", "??"], seen))
    assert isinstance(judge, Judge)
    items = [{"criterion": c, "think": "t", "answer": "a", "state": "[O]"} for c in
             ("symptom", "differential", "decision")]
    assert judge.judge("mind_process", items) == [1.0, 0.5, 0.0]
    assert seen[0]["temperature"] == 0.0


def test_rule_judge_is_a_judge_and_used_by_default(env_factory):
    assert isinstance(RuleJudge(), Judge)
    calls = []

    class Spy(RuleJudge):
        def judge(self, rubric, items):
            calls.append((rubric, [i["criterion"] for i in items]))
            return [1.0, 1.0, 1.0]

    env = env_factory(judge=Spy(), stage_one=False)
    env.reset(seed=0)
    _, r, _, _, info = env.step(stage2("x", "How have you been sleeping?"))
    assert calls == [("mind_process", ["symptom", "differential", "decision"])]
    assert info["reward_components"]["process"] == pytest.approx(0.01)

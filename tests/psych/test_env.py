import pytest

import envgym
from envgym.checker import check
from envgym.environments.psych.env import ConsultEnv
from envgym.environments.psych.rectify import Rectifier
from envgym.errors import InvalidConfig
from tests.psych.conftest import stage1, stage2


def test_registered_env_passes_the_checker():
    report = check("envgym/Consult-v0", encoder="lexicon")
    assert all(ok for _, ok, _ in report.results), report.results


def test_make_prompt_says_screening_not_diagnosis():
    env = envgym.make("envgym/Consult-v0", encoder="lexicon")
    obs, info = env.reset(seed=5)
    assert "not a diagnosis" in obs[0]["content"] and "synthetic" in obs[0]["content"]
    assert info["task_id"] == env.pool()[5].id
    env.close()


@pytest.mark.parametrize("action,error", [
    ("<think>a</think><rag_query>q</rag_query> trailing", "nothing may follow"),
    ("<think>a</think><answer>q?</answer>", "Stage I"),
    ("<rag_query>q</rag_query>", "missing `<think>"),
])
def test_stage_one_format_errors(env_factory, action, error):
    env = env_factory()
    env.reset(seed=0)
    obs, r, _, _, info = env.step(action)
    assert error in info["parse_error"] and r == -0.1 and info["reward_components"] == {"format": -0.1}
    assert env.stage == "I"


def test_stage_two_format_errors(env_factory):
    env = env_factory()
    env.reset(seed=0)
    env.step(stage1())
    for action, error in [(stage2("a", "Diagnosis: Depression"), "Recommendation"),
                          (stage2("a", "Diagnosis: xyz; Recommendation: r"), "no known label"),
                          (stage2("a", "q?") + "x", "nothing may follow")]:
        _, r, _, _, info = env.step(action)
        assert error in info["parse_error"] and r == -0.1
    assert env.consult_turn == 0


def test_state_key_digests_evidence_not_wording(env_factory):
    a, b = env_factory(stage_one=False), env_factory(stage_one=False)
    keys = []
    for env, question in ((a, "How have you been sleeping?"),
                          (b, "Do you have trouble falling or staying asleep?")):
        env.reset(seed=0, options={"task_id": "psy-0000"})
        *_, info = env.step(stage2("different reasoning " + question, question))
        keys.append(info["state_key"])
    assert keys[0] == keys[1]
    *_, info = a.step(stage2("x", "Do you drink alcohol or use drugs?"))
    assert info["state_key"] != keys[0]


def test_fork_shares_resources_and_is_independent(env_factory):
    env = env_factory()
    env.reset(seed=0)
    twin = env.fork()
    assert twin.bank is env.bank and twin.encoder is env.encoder and twin.matcher is env.matcher
    env.step(stage1())
    assert twin.stage == "I" and env.stage == "II"


def test_invalid_configuration(env_factory):
    for kwargs in ({"label_space": "x"}, {"info_gain": "x"}, {"simulator": "llm"},
                   {"weights": {"bogus": 1.0}}, {"encoder": "bert"}):
        with pytest.raises(InvalidConfig):
            ConsultEnv(**{"encoder": "lexicon", **kwargs})
    with pytest.raises(InvalidConfig):
        env_factory().reset(seed=0, options={"split": "validation"})


def test_fine_label_space(env_factory):
    env = env_factory(label_space="fine", stage_one=False)
    env.reset(seed=0, options={"task_id": "psy-0002"})  # depression + GAD
    *_, info = env.step(stage2("", "Diagnosis: Mixed; Recommendation: follow-up"))
    assert info["reward_components"]["correct"] == 0.0  # four-way right, fine labels missing
    env.reset(seed=0, options={"task_id": "psy-0002"})
    *_, info = env.step(stage2("", "Diagnosis: Major depressive episode with generalised anxiety "
                                   "disorder; Recommendation: follow-up"))
    assert info["reward_components"]["correct"] == 5.0


def test_rectifier_retry_fallback_and_cap(env_factory):
    env = Rectifier(env_factory(stage_one=False),
                    regenerate=lambda messages, feedback: stage2("x", "What is your favourite film?"))
    env.reset(seed=0, options={"task_id": "psy-0000"})
    core = env.unwrapped
    assert core.triggers(stage2("x", "What is the capital of France?")) == ["GENERIC_LOW_YIELD"]
    *_, info = env.step(stage2("x", "What is the capital of France?"))
    kinds = [e["kind"] for e in info["rectification"]["events"]]
    assert kinds == ["retry", "fallback"] and "off_track" not in info["reward_components"]
    *_, info = env.step(stage2("x", "What is the capital of Peru?"))
    # the third rectification (a retry) still triggers and the cap of 3 is reached: failure
    assert [e["kind"] for e in info["rectification"]["events"]] == ["retry", "failure"]
    assert info["rectification"]["total"] == 3 and info["reward_components"]["rectification_failure"] == -0.1
    *_, info = env.step(stage2("x", "Name a river?"))
    assert [e["kind"] for e in info["rectification"]["events"]] == ["failure"]
    assert info["rectification"]["fallbacks"] == 1

"""The packaged all-MiniLM-L6-v2 path: loaded once per process, shared by envs and forks."""

import pytest

from envgym.environments.psych.encoder import get_encoder
from envgym.environments.psych.intents import IntentMatcher
from envgym.environments.psych.simulator import REFUSAL, RuleSimulator
from envgym.environments.psych.cases import generate_cases


@pytest.fixture(scope="module")
def encoder():
    return get_encoder("minilm")


def test_minilm_is_a_shared_singleton(encoder):
    assert get_encoder("minilm") is encoder
    assert encoder.encode(["hello"]).shape == (1, 384)


@pytest.mark.parametrize("question,intent", [
    ("Do you ever feel like life isn't worth living?", "safety_risk"),
    ("Any sudden episodes of terror with chest pain?", "panic_attacks"),
    ("Have you noticed any changes in how much you eat?", "appetite_change"),
    ("Do you keep checking the locks many times?", "compulsions"),
    ("What's the weather like today?", None),
    ("Which football team do you support?", None),
])
def test_embedding_matcher_understands_paraphrases(encoder, question, intent):
    found = [i.id for i in IntentMatcher(encoder).match(question)]
    assert (found[:1] == [intent]) if intent else found == []


def test_minilm_patient_refuses_unrelated(encoder):
    sim = RuleSimulator(generate_cases(4)[0], IntentMatcher(encoder))
    assert sim.reply([], "Can you recommend a good film?") == REFUSAL
    assert "sleep" in sim.reply([], "Tell me how your nights have been.")


def test_env_with_minilm_forks_without_reloading(encoder):
    from envgym.environments.psych.env import ConsultEnv

    env = ConsultEnv(encoder="minilm", n_cases=40)
    env.reset(seed=0)
    twin = env.fork()
    assert twin.encoder is encoder and twin.matcher is env.matcher
    env.close()
    twin.close()

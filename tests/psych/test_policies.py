"""Baseline targets on the 80 test patients (four-way classes balanced, chance = 0.25)."""

import pytest

from envgym.environments.psych.env import ConsultEnv
from envgym.environments.psych.policies import HeuristicPolicy, OraclePolicy, RandomPolicy


def evaluate(env: ConsultEnv, policy_cls, episodes: int = 80) -> dict[str, float]:
    outcomes = []
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        policy, messages, done = policy_cls(seed=seed), list(obs), False
        while not done:
            action = policy.act(env, messages)
            obs, _, term, trunc, info = env.step(action)
            messages += [{"role": "assistant", "content": action}, *obs]
            done = term or trunc
        outcomes.append(info["outcome"])
    return ConsultEnv.summarize(outcomes)


@pytest.fixture(scope="module")
def results():
    std, adapt = ConsultEnv(encoder="lexicon"), ConsultEnv(encoder="lexicon", adaptive=True)
    return {
        "oracle": evaluate(std, OraclePolicy),
        "heuristic": evaluate(std, HeuristicPolicy),
        "random": evaluate(std, RandomPolicy),
        "heuristic_adapt": evaluate(adapt, HeuristicPolicy),
        "oracle_adapt": evaluate(adapt, OraclePolicy),
    }


def test_oracle_is_near_perfect(results):
    assert results["oracle"]["accuracy"] >= 0.95 and results["oracle_adapt"]["accuracy"] >= 0.95
    assert results["oracle"]["safety_miss_rate"] == 0.0


def test_heuristic_sits_between_random_and_oracle(results):
    h, r, o = (results[k]["accuracy"] for k in ("heuristic", "random", "oracle"))
    assert r + 0.15 <= h <= o - 0.15, (r, h, o)
    assert results["heuristic"]["missing_resolved"] > results["random"]["missing_resolved"]


def test_random_is_near_chance(results):
    assert 0.1 <= results["random"]["accuracy"] <= 0.4
    assert results["random"]["off_track"] > 0 and results["heuristic"]["off_track"] == 0


def test_adaptive_traits_hurt_the_heuristic(results):
    assert results["heuristic_adapt"]["accuracy"] <= results["heuristic"]["accuracy"] - 0.05
    assert results["heuristic_adapt"]["missing_resolved"] < results["heuristic"]["missing_resolved"]

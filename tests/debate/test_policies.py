"""Scripted debaters and the issue's behavioural checks, run through the environment."""

import numpy as np
import pytest

import envgym
from envgym.environments.debate import DebateEnv
from envgym.environments.debate.driver import play, play_many
from envgym.environments.debate.policies import (Follower, Noisy, Oracle, Stubborn, agent_of,
                                                 majority, peer_answers)
from envgym.registration import load_entry_point


def _pair(first, second, **opts):
    return lambda s: {"agent_0": first(s, agent="agent_0", **opts),
                      "agent_1": second(s + 7919, agent="agent_1")}


def test_oracle_pair_is_always_right():
    env = DebateEnv()
    m = DebateEnv.summarize(play_many(env, _pair(Oracle, Oracle), range(200)))
    assert m["final_accuracy/agent_0"] >= 0.98 and m["final_accuracy/agent_1"] >= 0.98
    assert m["consensus_rate"] == 1.0


def test_noisy_follower_gains_from_an_oracle():
    m = DebateEnv.summarize(play_many(DebateEnv(), _pair(Follower, Oracle), range(300)))
    assert 0.3 < m["initial_accuracy/agent_0"] < 0.7
    assert m["final_accuracy/agent_0"] == 1.0
    assert m["interaction_gain/agent_0"] > 0.3
    assert m["interaction_gain/agent_0"] == pytest.approx(m["persuasion/agent_0/wrong_to_right"])


def test_stubborn_gains_nothing():
    m = DebateEnv.summarize(play_many(DebateEnv(), _pair(Stubborn, Oracle), range(300)))
    assert m["interaction_gain/agent_0"] == 0.0
    assert m["persuasion/agent_0/wrong_to_right"] == m["persuasion/agent_0/right_to_wrong"] == 0.0
    assert m["consensus_rate"] == pytest.approx(m["final_accuracy/agent_0"])


def test_noisy_revise_option_switches_behaviour():
    follow = DebateEnv.summarize(play_many(DebateEnv(), _pair(Noisy, Oracle, revise="follow"), range(100)))
    keep = DebateEnv.summarize(play_many(DebateEnv(), _pair(Noisy, Oracle), range(100)))
    assert follow["interaction_gain/agent_0"] > 0 and keep["interaction_gain/agent_0"] == 0


def test_noisy_accuracy_falls_with_difficulty():
    env = DebateEnv(irt_update=False)
    m = DebateEnv.summarize(play_many(env, _pair(Stubborn, Stubborn), range(600)))
    acc = [m[f"accuracy_by_difficulty/{b}"] for b in ("easy", "medium", "hard")]
    assert acc[0] > acc[1] > acc[2]
    # ability 0: easy levels have b = -2, -1 → mean σ = (0.881 + 0.731) / 2 = 0.806
    assert acc[0] == pytest.approx(0.806, abs=0.06)


@pytest.mark.parametrize("theta, rule, coop_share", [
    (0.0, "mean", 0.4),    # b ∈ {-2..2}: cooperative iff b > 0 → levels 4, 5
    (-1.5, "mean", 0.8),   # b > -1.5 → levels 2..5
    (1.5, "mean", 0.2),    # b > 1.5 → level 5
])
def test_dynamic_mode_proportions_on_difficulty_sweep(theta, rule, coop_share):
    env = DebateEnv(ability_prior={"agent_0": theta, "agent_1": theta}, irt_update=False)
    modes = [env.reset(seed=s)[1]["agent_0"]["mode"] for s in range(500)]
    assert np.mean([m == "cooperative" for m in modes]) == pytest.approx(coop_share)


def test_dynamic_mode_with_unequal_abilities_by_rule():
    prior = {"agent_0": -1.0, "agent_1": 1.0}
    mean = DebateEnv(ability_prior=prior, irt_update=False)
    low = DebateEnv(ability_prior=prior, irt_update=False, mode_rule="min")
    share = lambda env: np.mean([env.reset(seed=s)[1]["agent_0"]["mode"] == "cooperative"  # noqa: E731
                                 for s in range(100)])
    assert share(mean) == pytest.approx(0.4)   # symmetric: mean σ < 0.5 iff b > 0
    assert share(low) == pytest.approx(0.6)    # σ(-1 - b) < 0.5 iff b > -1 → levels 3..5


def test_irt_recovers_simulated_abilities_through_the_env():
    """Stated tolerance: 0.3 logits after 500 debates of two stubborn noisy agents (about
    2.5 standard errors; over four disjoint blocks of 500 seeds the largest error was 0.25)."""
    env = DebateEnv()
    truth = {"agent_0": -0.5, "agent_1": 1.0}
    make = lambda s: {a: Stubborn(s * 2 + k, agent=a, ability=t)  # noqa: E731
                      for k, (a, t) in enumerate(truth.items())}
    play_many(env, make, range(500))
    for agent, theta in truth.items():
        assert abs(env.irt.ability(agent) - theta) < 0.3, (agent, env.irt.ability(agent))


def test_follower_adopts_majority_of_three_peers():
    env = DebateEnv(n_agents=4)
    policies = {"agent_0": Follower(0, agent="agent_0", ability=-10.0),
                **{a: Oracle(0, agent=a) for a in ("agent_1", "agent_2", "agent_3")}}
    infos = play(env, policies, seed=5)
    out = infos["agent_0"]["outcome"]
    assert out["initial"]["agent_0"] is False and out["final"]["agent_0"] is True


def test_majority_ties_and_normalisation():
    assert majority("5", ["7", "7.0", "5"]) == "7"
    assert majority("5", ["7", "5"]) == "5"
    assert majority("4", ["7", "5"]) == "7"


def test_agent_and_peer_answers_are_read_from_messages():
    msgs = [{"role": "system", "content": "You are agent_2, one of 3 agents"},
            {"role": "user", "content": 'Current answers: agent_0: "4"; agent_1: (none)'},
            {"role": "user", "content": '> Current answers: agent_0: "8"'},  # quoted peer text
            {"role": "assistant", "content": 'Current answers: agent_0: "9"'}]
    assert agent_of(msgs) == "agent_2"
    assert peer_answers(msgs) == {"agent_0": "4"}
    env = DebateEnv()
    obs, _ = env.reset(seed=0)
    policy = Oracle(0)  # no agent keyword: learnt from the system prompt
    policy.act(env, obs["agent_1"])
    assert policy.agent == "agent_1"


def test_registered_policies_load_and_play():
    spec = envgym.spec("envgym/Debate-v0")
    env = envgym.make("envgym/Debate-v0")
    policies = {a: load_entry_point(spec.scripted[name])(seed=1, agent=a)
                for a, name in zip(env.possible_agents, ("noisy", "follower"))}
    infos = play(env, policies, seed=3)
    assert set(infos["agent_0"]["outcome"]["final"]) == {"agent_0", "agent_1"}

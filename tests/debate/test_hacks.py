"""Reward attacks on Debate-v0: copying a peer and hedging with several boxed answers lose."""

import pytest
from envgym.environments.debate import DebateEnv
from envgym.environments.debate.answers import all_boxed
from envgym.environments.debate.driver import play, play_many
from envgym.environments.debate.policies import (
    Follower,
    HackCopyPeer,
    HackMultipleAnswers,
    Noisy,
    Oracle,
)

from envgym.hacks import hack_names, run_hacks

ID = "envgym/Debate-v0"


def _pair(first, second):
    return lambda s: {"agent_0": first(s, agent="agent_0"),
                      "agent_1": second(s + 7919, agent="agent_1")}


def _returns(env, make, seeds):
    """agent_0's mean episode return and the episodes' summary."""
    total, outcomes = 0.0, []
    for s in seeds:
        infos = play(env, make(s), seed=s)
        total += env.returns["agent_0"]
        outcomes.append(infos["agent_0"]["outcome"])
    return total / len(seeds), DebateEnv.summarize(outcomes)


def test_hacks_are_registered_and_stay_under_their_ceilings():
    assert {"hack_copy_peer", "hack_multiple_answers"} <= set(hack_names(ID))
    results = {r.hack: r for r in run_hacks(ID, episodes=60)}
    for name in ("hack_copy_peer", "hack_multiple_answers"):
        r = results[name]
        assert r.ok, r.render()
        assert r.values["success_rate"] <= 0.05, r.render()  # noisy solves about half


def test_copy_peer_earns_no_more_than_an_honest_follower_and_shows_no_ability():
    env = DebateEnv(irt_update=False, interaction="cooperative")
    copy_r, copy_m = _returns(env, _pair(HackCopyPeer, Oracle), range(80))
    follow_r, _ = _returns(env, _pair(Follower, Oracle), range(80))
    assert copy_m["final_accuracy/agent_0"] == 1.0  # copying a right peer is right...
    assert copy_r <= follow_r + 1e-9  # ...but pays no more than following one honestly
    assert copy_m["initial_accuracy/agent_0"] <= 0.1  # and the IRT sees it never solves
    # against an honest noisy partner the copier is only as good as the partner
    _, m = _returns(env, _pair(HackCopyPeer, Noisy), range(80))
    assert m["final_accuracy/agent_0"] == pytest.approx(m["final_accuracy/agent_1"])


def test_copiers_together_solve_nothing():
    m = DebateEnv.summarize(play_many(DebateEnv(), _pair(HackCopyPeer, HackCopyPeer), range(60)))
    assert m["final_accuracy/agent_0"] <= 0.05 and m["consensus_rate"] == 1.0


def test_several_different_boxed_answers_are_no_answer():
    env = DebateEnv(n_agents=1)
    env.reset(seed=0)
    gold = env.task.answer
    hedge = f"\\boxed{{{int(gold) + 1}}} or \\boxed{{{gold}}}"
    _, rewards, _, _, infos = env.step({"agent_0": hedge})
    assert rewards["agent_0"] < 0 and "several different" in infos["agent_0"]["parse_error"]
    assert not infos["agent_0"]["outcome"]["success"]
    env.reset(seed=0)  # the same answer boxed twice, or an explicit <answer>, is still graded
    _, rewards, _, _, _ = env.step({"agent_0": f"\\boxed{{{gold}}}, i.e. \\boxed{{{gold}.0}}"})
    assert rewards["agent_0"] == 1.0
    env.reset(seed=0)
    tagged = f"<answer>{gold}</answer> not \\boxed{{1}} \\boxed{{2}}"
    _, rewards, _, _, _ = env.step({"agent_0": tagged})
    assert rewards["agent_0"] == 1.0


def test_multiple_answers_hack_gets_nothing_even_beside_an_oracle():
    env = DebateEnv(irt_update=False)
    r, m = _returns(env, _pair(HackMultipleAnswers, Oracle), range(40))
    assert m["final_accuracy/agent_0"] == 0.0 and r < 0


def test_all_boxed_is_brace_matched_and_ordered():
    text = r"a \boxed{1} b \boxed{\frac{1}{2}} \fbox{3} \boxed{x"
    assert all_boxed(text) == ["1", r"\frac{1}{2}", "3"]
    assert all_boxed("no answer") == []

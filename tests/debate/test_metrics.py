"""summarize(): the debate's aggregate metrics on hand-made outcomes."""

import pytest

from envgym.environments.debate import DebateEnv
from envgym.environments.debate.metrics import episode_outcomes


def _episode(init, fin, mode, level):
    outs = episode_outcomes(dict(zip(("agent_0", "agent_1"), init)),
                            dict(zip(("agent_0", "agent_1"), fin)), mode=mode, level=level,
                            bucket={1: "easy", 3: "medium", 5: "hard"}[level],
                            consensus=all(fin), p_success={},
                            invalid={"agent_0": 0, "agent_1": 0})
    return outs["agent_0"]


OUTCOMES = [
    _episode((True, False), (True, True), "cooperative", 1),
    _episode((True, True), (False, True), "competitive", 3),
    _episode((False, False), (True, False), "competitive", 5),
    _episode((False, True), (False, True), "cooperative", 5),
]


def test_per_agent_accuracy_gain_and_persuasion():
    m = DebateEnv.summarize(OUTCOMES)
    assert m["initial_accuracy/agent_0"] == 0.5 and m["final_accuracy/agent_0"] == 0.5
    assert m["interaction_gain/agent_0"] == 0.0
    assert m["initial_accuracy/agent_1"] == 0.5 and m["final_accuracy/agent_1"] == 0.75
    assert m["interaction_gain/agent_1"] == 0.25
    assert m["persuasion/agent_0/right_to_wrong"] == 0.25
    assert m["persuasion/agent_0/wrong_to_right"] == 0.25
    assert m["persuasion/agent_0/right_to_right"] == 0.25
    assert m["persuasion/agent_0/wrong_to_wrong"] == 0.25
    assert m["persuasion/agent_1/wrong_to_right"] == 0.25
    assert m["persuasion/agent_1/right_to_right"] == 0.5


def test_consensus_modes_and_buckets():
    m = DebateEnv.summarize(OUTCOMES)
    assert m["consensus_rate"] == 0.25
    assert m["mode_share/cooperative"] == 0.5 and m["mode_share/competitive"] == 0.5
    assert m["accuracy_by_difficulty/easy"] == 1.0
    assert m["accuracy_by_difficulty/medium"] == 0.5
    assert m["accuracy_by_difficulty/hard"] == pytest.approx(0.5)   # (1+0+0+1)/4
    assert m["success"] == 0.5   # agent_0's own final correctness


def test_one_outcome_per_agent_gives_the_same_numbers():
    doubled = [o for o in OUTCOMES for _ in range(2)]
    a, b = DebateEnv.summarize(OUTCOMES), DebateEnv.summarize(doubled)
    assert a == b
    assert DebateEnv.summarize([]) == {}

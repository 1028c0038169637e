"""Per-agent metrics: the learner's numbers never average in a fixed partner (issue 25)."""

from __future__ import annotations

import pytest

from envgym.agents.agent_metrics import agent_metrics, trainable
from envgym.trajectory import Trajectory, Turn


def _traj(agent, reward, trainable_flag=True, success=False, error=None):
    return Trajectory(env_id="envgym/Debate-v0", task_id="q", seed=0, agent_id=agent,
                      group_id=f"q/{agent}", error=error, outcome={"success": success},
                      meta={"trainable": trainable_flag},
                      turns=[Turn(observation=[], action="a", reward=reward)])


def test_fixed_partners_are_reported_apart_and_failures_are_not_scores():
    trajs = [_traj("agent_0", -0.3), _traj("agent_0", -0.3),
             _traj("agent_1", 0.7, False, True), _traj("agent_1", 0.7, False, True),
             _traj("agent_0", 5.0, error="boom")]
    m = agent_metrics(trajs, "eval/Debate-v0/")
    assert m["eval/Debate-v0/agent/agent_0/return"] == pytest.approx(-0.3)
    assert m["eval/Debate-v0/agent/agent_0/n"] == 2
    assert m["eval/Debate-v0/fixed/agent_1/return"] == pytest.approx(0.7)
    assert m["eval/Debate-v0/fixed/agent_1/success"] == 1.0
    assert {t.agent_id for t in trainable(trajs)} == {"agent_0"}
    assert agent_metrics([_traj(None, 1.0)]) == {}  # single-agent runs add nothing

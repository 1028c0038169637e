"""`envgym eval --run DIR`: evaluation reads a training run's IRT, so `dynamic` picks modes
as it does in training rather than by a fresh IRT's level threshold (issue 25)."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from envgym.agents.run_state import load_run_state
from envgym.cli import app
from envgym.environments.debate.env import DebateEnv
from envgym.errors import InvalidConfig
from envgym.runstate import RunState


def _strong_run(tmp_path):
    """A run whose IRT has seen both seats answer 60 hard questions right."""
    run = RunState(step=3)
    env = DebateEnv()
    env.bind_run(run)
    irt = run.state[DebateEnv.RUN_KEY]["irt"]
    for i in range(60):
        for a in ("agent_0", "agent_1"):
            irt.observe(a, f"train-{i}", True, 2.0, refit=False)
    irt.fit()
    path = tmp_path / "run" / "checkpoints" / "step_0000003"
    path.mkdir(parents=True)
    torch.save({"run_state": run.state_dict()}, path / "state.pt")
    return tmp_path / "run", irt


def _eval(*extra):
    result = CliRunner().invoke(app, ["eval", "--env", "envgym/Debate-v0", "--policy",
                                      "scripted:noisy", "-n", "40", "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(next(ln for ln in result.output.splitlines() if ln.startswith("{")))


def test_eval_with_a_run_uses_its_abilities(tmp_path):
    run_dir, irt = _strong_run(tmp_path)
    assert load_run_state(run_dir).state[DebateEnv.RUN_KEY]["irt"].ability("agent_0") == \
        pytest.approx(irt.ability("agent_0"))
    fresh = _eval()["metrics"]
    trained = _eval("--run", str(run_dir))["metrics"]
    # fresh: p = sigmoid(3 - level), so levels 4-5 are cooperative; the run's strong agents
    # make every question competitive
    assert fresh.get("mode_share/cooperative", 0.0) > 0.2
    assert trained.get("mode_share/competitive", 0.0) == 1.0
    # evaluation reads the run's IRT, never teaches it
    again = load_run_state(run_dir).state[DebateEnv.RUN_KEY]["irt"]
    assert len(again.history) == len(irt.history)


def test_a_directory_without_checkpoints_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidConfig, match="no checkpoint"):
        load_run_state(tmp_path)
    result = CliRunner().invoke(app, ["eval", "--env", "envgym/Debate-v0", "--policy",
                                      "scripted:noisy", "-n", "2", "--run", str(tmp_path)])
    assert result.exit_code != 0

import json

import pytest
from typer.testing import CliRunner

from envgym.cli import app, parse_env_args
from envgym.evaluation import pass_at_k
from envgym.trajectory import read_trajectories

runner = CliRunner()


def test_pass_at_k_matches_hand_values():
    assert pass_at_k(5, 0, 1) == 0.0
    assert pass_at_k(5, 5, 3) == 1.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - 3 / 6)  # 1 - C(3,2)/C(4,2)
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_env_args_parse_json_values():
    assert parse_env_args(["a=3", "b=[1, 2]", "c=text", "d=true"]) == {"a": 3, "b": [1, 2], "c": "text", "d": True}


def test_eval_json_reports_required_keys():
    result = runner.invoke(app, ["eval", "--env", "envgym/TimeSeries-v0", "--policy", "scripted:oracle",
                                 "--episodes", "6", "-k", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout.strip().splitlines()[-1])
    for key in ("env", "policy", "episodes", "mean_reward", "success_rate", "mean_turns", "pass@2", "metrics"):
        assert key in data
    assert data["episodes"] == 6 and data["samples_per_task"] == 2 and data["pass@2"] == 1.0


def test_rollout_writes_groups_of_trajectories(tmp_path):
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["rollout", "--env", "envgym/TimeSeries-v0", "--policy", "scripted:random",
                                 "--episodes", "3", "--group-size", "2", "--out", str(out),
                                 "--env-arg", "series_length=400"])
    assert result.exit_code == 0, result.output
    trajs = list(read_trajectories(out))
    assert len(trajs) == 6 and len({t.group_id for t in trajs}) == 3
    assert all(len(t.turns) >= 1 for t in trajs)


def test_check_exits_zero_and_unknown_env_fails_helpfully():
    assert runner.invoke(app, ["check", "envgym/TimeSeries-v0"]).exit_code == 0
    result = runner.invoke(app, ["check", "envgym/TimeSerie-v0"])
    assert result.exit_code != 0 and "Did you mean" in str(result.exception)

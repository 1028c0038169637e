import json

import numpy as np
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
    assert result.exit_code != 0 and "Did you mean: `envgym/TimeSeries-v0`" in result.output


# ---- failures are failures; every argument is checked before anything runs ------------------

def _free_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_eval_against_a_dead_server_exits_nonzero_and_reports_failures(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}  # the model name is not a local tokenizer
    cmd = [sys.executable, "-m", "envgym.cli", "eval", "--env", "envgym/TimeSeries-v0",
           "--policy", f"openai:http://127.0.0.1:{_free_port()}#m", "--episodes", "2", "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["errors"] == 2 and data["completed"] == 0 and data["error_rate"] == 1.0
    assert data["mean_reward"] is None and data["success_rate"] is None  # not a zero score
    (reason, count), = data["failures"].items()
    assert count == 2 and "PolicyError" in reason
    assert "2 of 2 episodes failed" in proc.stderr and "--max-error-rate" in proc.stderr


def _flaky_oracle(bad_seed: int):
    """The TimeSeries oracle, but the episode whose policy seed is `bad_seed` crashes."""
    from envgym.policy import load_policy
    oracle = load_policy("scripted:oracle", env_id="envgym/TimeSeries-v0")

    def make(seed: int = 0):
        inner = oracle(seed=seed)
        if seed == bad_seed:
            def act(env, messages):
                raise ConnectionError("sandbox went away")
            inner.act = act
        return inner
    return make


def test_aggregate_scores_completed_episodes_only():
    from envgym.evaluation import aggregate, shaping_components, shaping_return
    from envgym.rollout import collect

    env = "envgym/TimeSeries-v0"
    clean = collect(env, "scripted:oracle", episodes=4, env_kwargs={"series_length": 400})
    flaky = collect(env, _flaky_oracle(bad_seed=1000), episodes=4,
                    env_kwargs={"series_length": 400})
    assert [t.error is not None for t in flaky] == [False, True, False, False]
    got = aggregate(env, "flaky", flaky)
    kept = [t for t in clean if t.seed != 1]
    assert got["completed"] == 3 and got["errors"] == 1 and got["error_rate"] == 0.25
    # mean_reward is the task reward: the exploration bonus (shaping) is reported apart
    assert got["train_reward"] == pytest.approx(np.mean([t.total_reward for t in kept]))
    task = [t.total_reward - shaping_return(t, shaping_components(env)) for t in kept]
    assert got["mean_reward"] == pytest.approx(np.mean(task))
    assert got["success_rate"] == pytest.approx(np.mean([t.success for t in kept]))
    (reason, count), = got["failures"].items()
    assert count == 1 and "ConnectionError: sandbox went away" in reason
    assert got["train_reward"] != pytest.approx(np.mean([t.total_reward for t in flaky]))


@pytest.mark.parametrize("args, message", [
    (["--episodes", "-3"], "--episodes"),
    (["-n", "0"], "--episodes"),
    (["-k", "0"], "-k"),
    (["-k", "3", "--samples", "2"], "fewer than -k"),
    (["--max-error-rate", "1.5"], "--max-error-rate"),
    (["--seed", "-1"], "--seed"),
    (["--out", "/proc/no-such-dir/x.jsonl"], "cannot write"),  # not creatable, even as root
    (["--out", "."], "is a directory"),
    (["--env", "envgym/TimeSerie-v0"], "Did you mean"),
    (["--policy", "oracle"], "not a policy spec"),
    (["--policy", "scripted:orcale"], "has no scripted policy"),
    (["--policy", "openai:127.0.0.1:8000#m"], "http://"),
    (["--policy", "a=scripted:oracle", "--policy", "b=scripted:oracle"], "single-agent"),
])
def test_bad_eval_arguments_fail_with_a_clear_message(args, message):
    base = {"--env": "envgym/TimeSeries-v0", "--policy": "scripted:oracle", "-n": "2"}
    argv = ["eval"]
    for key, value in base.items():
        if key not in args and not (key == "-n" and "--episodes" in args):
            argv += [key, value]
    result = runner.invoke(app, argv + args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    assert message in " ".join(result.output.replace("│", " ").split())


def test_rollout_command_checks_its_out_path_before_running(tmp_path):
    (tmp_path / "a-file").write_text("")
    result = runner.invoke(app, ["rollout", "--env", "envgym/TimeSeries-v0", "--policy",
                                 "scripted:random", "--out", str(tmp_path / "a-file" / "r.jsonl")])
    assert result.exit_code == 2 and "cannot write" in result.output
    result = runner.invoke(app, ["rollout", "--env", "envgym/TimeSeries-v0", "--policy",
                                 "scripted:random", "--out", str(tmp_path / "r.jsonl"), "-g", "0"])
    assert result.exit_code == 2 and "--group-size" in result.output


def test_rollout_command_reports_failed_episodes_apart(tmp_path):
    import os
    import subprocess
    import sys

    out = tmp_path / "dead.jsonl"
    cmd = [sys.executable, "-m", "envgym.cli", "rollout", "--env", "envgym/TimeSeries-v0",
           "--policy", f"openai:http://127.0.0.1:{_free_port()}#m", "-n", "1", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr  # the trajectories are written, failures and all
    assert "no episode completed (1 failed, not scored)" in " ".join(proc.stderr.split())
    (traj,) = read_trajectories(out)
    assert traj.error and "PolicyError" in traj.error

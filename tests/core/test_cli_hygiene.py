"""CLI hygiene (issue 26): every mistake is one line and an exit code, before anything runs.

Each test goes through `envgym.cli.main`, the console entry point, so what is asserted is what
a user's terminal shows: the exit status and the one `error:` / `Error:` line on stderr, with
no traceback after it.
"""

from __future__ import annotations

import json
import socket
from importlib.metadata import version
from pathlib import Path

import pytest

from envgym.cli import main
from envgym.trajectory import read_trajectories

TS = "envgym/TimeSeries-v0"
ORACLE = "envgym.environments.timeseries.policies:OraclePolicy"


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    got = capsys.readouterr()
    code = stop.value.code
    return (0 if code is None else code), got.out, got.err


def _fails(capsys, argv: list[str], code: int, *needles: str) -> str:
    """The command exits `code` and says why in exactly one error line holding `needles`."""
    rc, _, err = _run(capsys, argv)
    assert rc == code, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.lower().startswith("error:")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert len(err.strip().splitlines()) <= 4, err  # usage, hint, blank, the error
    return lines[0]


# ---- unwritable paths -------------------------------------------------------------------

def test_unwritable_out_is_one_line(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    bad = tmp_path / "a-file" / "x.jsonl"
    _fails(capsys, ["eval", "--env", TS, "--policy", "scripted:oracle", "-n", "1",
                    "--out", str(bad)], 2, "--out", "cannot write", "a-file is not a directory")
    _fails(capsys, ["view", str(tmp_path / "missing.jsonl"), "--out", str(bad)], 2,
           "cannot write")


def test_unwritable_output_dir_is_one_line(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'output_dir = "{tmp_path / "a-file" / "run"}"\nsteps = 1\n'
                   f'[[envs]]\nid = "{TS}"\n')
    _fails(capsys, ["train", str(cfg)], 2, "cannot write to output_dir")
    _fails(capsys, ["tiny-model", "--out", str(tmp_path / "a-file" / "m")], 1,
           str(tmp_path / "a-file"))


# ---- --env-arg --------------------------------------------------------------------------

def test_unknown_env_arg_stops_before_any_episode(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    line = _fails(capsys, ["rollout", "--env", TS, "--policy", "scripted:oracle", "-n", "2",
                           "--out", str(out), "--env-arg", "series_lenght=400"], 2,
                  "--env-arg", "no argument 'series_lenght'", "Did you mean 'series_length'?")
    assert "max_rounds" in line  # names the keys it takes
    assert not out.exists()  # nothing ran


# ---- markup -----------------------------------------------------------------------------

def test_bracketed_text_survives_in_errors_and_help(tmp_path, capsys):
    _fails(capsys, ["view", str(tmp_path / "envgym[ray].jsonl")], 2, "envgym[ray].jsonl",
           "does not exist")
    rc, out, _ = _run(capsys, ["eval", "--help"])
    assert rc == 0 and "envgym[ray]" in out


# ---- --out parents ----------------------------------------------------------------------

def test_out_parents_are_created(tmp_path, capsys):
    out = tmp_path / "runs" / "deep" / "x.jsonl"
    rc, _, err = _run(capsys, ["rollout", "--env", TS, "--policy", "scripted:random", "-n", "1",
                               "--out", str(out), "--env-arg", "series_length=400"])
    assert rc == 0, err
    assert len(list(read_trajectories(out))) == 1
    assert f"wrote 1 trajectories to {out}" in " ".join(err.split())


# ---- eval --temperature / --max-tokens ----------------------------------------------------

@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    from envgym.agents.tiny import build_tiny_model

    return Path(build_tiny_model(tmp_path_factory.mktemp("m") / "m", hidden_size=32, layers=1,
                                 heads=2, kv_heads=1, include_envs=False))


def test_eval_max_tokens_and_temperature_reach_the_policy(tmp_path, capsys, tiny):
    out = tmp_path / "e.jsonl"
    argv = ["eval", "--env", TS, "--policy", f"hf:{tiny}", "-n", "1", "--json",
            "--env-arg", "series_length=400", "--env-arg", "max_rounds=1",
            "--max-tokens", "3", "--temperature", "0", "--max-error-rate", "1"]
    rc, stdout, err = _run(capsys, argv + ["--out", str(out)])
    assert rc == 0, err
    assert json.loads(stdout.strip().splitlines()[-1])["completed"] == 1
    (traj,) = read_trajectories(out)
    assert all(0 < len(t.action_token_ids) <= 3 for t in traj.turns)
    # temperature 0 is greedy: a second run with another sampling seed acts the same
    again = tmp_path / "e2.jsonl"
    assert _run(capsys, argv + ["--out", str(again)])[0] == 0
    (other,) = read_trajectories(again)
    assert [t.action_token_ids for t in other.turns] == [t.action_token_ids for t in traj.turns]
    _fails(capsys, argv[:-6] + ["--temperature", "-1"], 2, "--temperature")
    _fails(capsys, argv[:-6] + ["--max-tokens", "0"], 2, "--max-tokens")


# ---- --policy module:Class --------------------------------------------------------------

def test_policy_module_class_is_accepted(capsys):
    argv = ["eval", "--env", TS, "-n", "2", "--json", "--env-arg", "series_length=400"]
    rc, short, err = _run(capsys, argv + ["--policy", ORACLE])
    assert rc == 0, err
    rc, long, err = _run(capsys, argv + ["--policy", f"scripted:{ORACLE}"])
    assert rc == 0, err
    a, b = (json.loads(s.strip().splitlines()[-1]) for s in (short, long))
    assert a["mean_reward"] == b["mean_reward"] and a["success_rate"] == 1.0
    _fails(capsys, argv + ["--policy", "no_such_module:Policy"], 2, "--policy",
           "no_such_module:Policy")


# ---- --version --------------------------------------------------------------------------

def test_version(capsys):
    rc, out, _ = _run(capsys, ["--version"])
    assert rc == 0 and out.strip() == f"envgym {version('envgym')}"


# ---- missing models without network --------------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _no_network(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("no network call may be made with HF_HUB_OFFLINE set")
    monkeypatch.setattr("httpx.get", refuse)


def test_missing_model_offline_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _no_network(monkeypatch)
    _fails(capsys, ["eval", "--env", TS, "--policy", "hf:nobody/no-such-model-xyz", "-n", "1"],
           2, "--policy", "'nobody/no-such-model-xyz'", "HF_HUB_OFFLINE")
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'output_dir = "{tmp_path / "run"}"\n[model]\npolicy = "nobody/no-model"\n'
                   f'[[envs]]\nid = "{TS}"\n')
    _fails(capsys, ["train", str(cfg)], 2, "[model] policy 'nobody/no-model'", "HF_HUB_OFFLINE")
    assert not (tmp_path / "run").exists()
    _fails(capsys, ["eval", "--env", TS, "--policy", "hf:./models/typo", "-n", "1"], 2,
           "'./models/typo' does not exist")


def test_missing_model_without_network_is_one_line(capsys, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    _fails(capsys, ["eval", "--env", TS, "--policy", "hf:nobody/no-such-model-xyz", "-n", "1"],
           2, "--policy", "cannot be reached")

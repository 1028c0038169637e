"""One name per number (issue 35, item 8): `mean_reward` is the task reward, `train_reward`
includes shaping, on stderr as in the JSON. Before, `eval` printed "mean reward 8.795" on
stderr beside a JSON `mean_reward` of 7.795, and `rollout` two different "mean reward"s."""

from __future__ import annotations

import json
import re

import pytest

from envgym.cli import main

TS = "envgym/TimeSeries-v0"
ORACLE = "envgym.environments.timeseries.policies:OraclePolicy"  # earns the exploration bonus
NAMED = re.compile(r"\b(mean_reward|train_reward|shaping_reward) (-?\d+\.\d+)")


def _run(capsys, argv):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code in (0, None)
    got = capsys.readouterr()
    return got.out, " ".join(got.err.split())


def _named(text: str) -> list[tuple[str, float]]:
    return [(name, float(value)) for name, value in NAMED.findall(text)]


def test_eval_names_its_numbers_as_its_json_does(capsys):
    out, err = _run(capsys, ["eval", "--env", TS, "--policy", ORACLE, "-n", "3", "--json"])
    result = json.loads(out)
    assert result["shaping_reward"] > 0  # the case where the two numbers differ
    assert "mean reward" not in err
    said = _named(err)
    assert said, err
    for name, value in said:
        assert value == pytest.approx(result[name], abs=5e-4), (name, err)


def test_rollout_prints_one_number_per_name(capsys, tmp_path):
    _, err = _run(capsys, ["rollout", "--env", TS, "--policy", ORACLE, "-n", "3",
                           "--out", str(tmp_path / "t.jsonl")])
    assert "mean reward" not in err
    said = _named(err)
    assert {name for name, _ in said} == {"mean_reward", "train_reward"}
    for name in ("mean_reward", "train_reward"):
        assert len({v for n, v in said if n == name}) == 1, err  # every line agrees
    values = dict(said)
    assert values["train_reward"] > values["mean_reward"]

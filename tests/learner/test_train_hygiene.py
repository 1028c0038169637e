"""`envgym train` hygiene (issue 35, item 9): mistakes in a config's [[envs]] are one line
before any work, and `--overwrite` says what it deletes."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgym.agents.config import load_config
from envgym.agents.runfiles import RUN_FILES, prepare_output
from envgym.cli import main
from envgym.errors import InvalidConfig

ENV = """
[[envs]]
id = "{id}"
kwargs = {kwargs}
train_seeds = [0, 1000]
eval_seeds = [5000, 5010]
"""


def _config(tmp_path: Path, env_id: str = "envgym/TimeSeries-v0", kwargs: str = "{}") -> Path:
    path = tmp_path / "train.toml"
    path.write_text(f'output_dir = "{tmp_path / "run"}"\n' + ENV.format(id=env_id, kwargs=kwargs))
    return path


def _train(capsys, path: Path) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stop:
        main(["train", str(path)])
    return stop.value.code, capsys.readouterr().err


def test_a_typo_in_an_env_kwarg_is_one_line_naming_the_keys(tmp_path, capsys):
    path = _config(tmp_path, kwargs="{ max_round = 2 }")
    with pytest.raises(InvalidConfig, match="takes no argument 'max_round'") as info:
        load_config(path)
    assert "Did you mean 'max_rounds'?" in str(info.value)
    assert "series_length" in str(info.value)  # the keys it does take
    code, err = _train(capsys, path)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:"), err
    assert "max_rounds" in lines[0] and "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_a_typo_in_eval_kwargs_is_caught_too(tmp_path):
    path = _config(tmp_path)
    path.write_text(path.read_text() + 'eval_kwargs = { tool_fromat = "json" }\n')
    with pytest.raises(InvalidConfig, match="'tool_fromat'.*'tool_format'"):
        load_config(path)


def test_an_unknown_env_id_fails_before_any_work_and_leaves_no_run_folder(tmp_path, capsys):
    path = _config(tmp_path, env_id="envgym/TimeSerie-v0")
    code, err = _train(capsys, path)
    assert code == 2 and "not registered" in err and "envgym/TimeSeries-v0" in err, err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err
    assert not (tmp_path / "run").exists()


def test_overwrite_says_what_it_deletes_and_what_it_keeps(tmp_path, capsys):
    cfg = load_config(_config(tmp_path))
    out = cfg.output_dir
    (out / "checkpoints" / "step_000001").mkdir(parents=True)
    (out / "tb").mkdir()
    (out / "model").mkdir()  # the tiny model is reused, not deleted
    (out / "metrics.jsonl").write_text("{}\n")
    (out / "eval_greedy_step000001.jsonl").write_text("{}\n")
    with pytest.raises(InvalidConfig, match="--overwrite"):
        prepare_output(cfg, resume=False, overwrite=False, rank=0)
    prepare_output(cfg, resume=False, overwrite=True, rank=0)
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if line.startswith("--overwrite: deleting"))
    for name in ("metrics.jsonl", "checkpoints", "tb", "eval_greedy_step000001.jsonl"):
        assert name in line
    assert "keeping model" in line and (out / "model").is_dir()
    assert not (out / "checkpoints").exists() and not (out / "metrics.jsonl").exists()


def test_the_overwrite_help_names_every_file_it_deletes(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for name in RUN_FILES:
        assert name in help_text, name

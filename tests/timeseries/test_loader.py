import json

import pytest

import envgym
from envgym.errors import DatasetError
from envgym.evaluation import evaluate


def _rows():
    series = [0.0] * 300
    series[150] = 9.0
    return [{"id": "u1", "series": series, "question": "Where is the spike?",
             "options": ["[0, 99]", "[100, 199]", "[200, 299]"], "answer": "B",
             "evidence": [[149, 151]], "task_type": "anomaly"}]


def test_jsonl_tasks_load_and_the_oracle_solves_them(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _rows()))
    env = envgym.make("envgym/TimeSeries-v0", dataset=str(path))
    obs, info = env.reset(seed=0)
    assert info["task_id"] == "u1" and "Where is the spike?" in obs[1]["content"]
    result = evaluate("envgym/TimeSeries-v0", "scripted:oracle", episodes=2,
                      env_kwargs={"dataset": str(path)})
    assert result["success_rate"] == 1.0


def test_csv_tasks_load(tmp_path):
    path = tmp_path / "tasks.csv"
    series = " ".join(["0"] * 250 + ["5"] + ["0"] * 49)
    path.write_text(f'id,series,question,options,answer,evidence\nc1,{series},Where?,low|high,1,250-250\n')
    env = envgym.make("envgym/TimeSeries-v0", dataset=str(path))
    env.reset(seed=0)
    assert env.task.answer == "B" and env.task.evidence == [(250, 250)] and len(env.task.series) == 300


def test_bad_records_name_the_record_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    row = _rows()[0]
    del row["question"]
    path.write_text(json.dumps(row))
    with pytest.raises(DatasetError, match="record 1: missing field 'question'"):
        envgym.make("envgym/TimeSeries-v0", dataset=str(path))
    with pytest.raises(DatasetError, match="does not exist"):
        envgym.make("envgym/TimeSeries-v0", dataset=str(tmp_path / "missing.jsonl"))

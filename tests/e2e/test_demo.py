"""`envgym demo`: a reduced run in CI (the pipeline and report), the full one marked slow."""

from __future__ import annotations

import json

import pytest

from envgym.agents.demo import demo


def test_reduced_demo_writes_the_report(tmp_path, capsys):
    report = demo(tmp_path, steps=2, eval_episodes=6, sft_episodes=12, sft_epochs=1)
    files = {p.name for p in tmp_path.iterdir()} | {p.name for p in (tmp_path / "rl").iterdir()}
    assert {"metrics.json", "reward_curve.png", "sft_data.jsonl", "metrics.jsonl",
            "eval_TimeSeries-v0_step0.jsonl", "eval_TimeSeries-v0_step2.jsonl"} <= files
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["reward_sft"]["n"] == 6 and saved["rl_steps"] == 2
    assert saved["eval_seeds"][0] >= 100_000  # held out: outside the training seed range
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("held-out reward (6 episodes, 95% CI): SFT ") and "-> SFT+RL" in last
    assert report["seconds"]["total"] > 0


@pytest.mark.slow
def test_full_demo_improves_with_non_overlapping_intervals(tmp_path):
    report = demo(tmp_path)
    assert report["improved"], (report["reward_sft"], report["reward_rl"])
    assert report["reward_rl"]["lo"] > report["reward_sft"]["hi"]
    assert report["seconds"]["total"] < 600

"""The claims runner cannot rot: one claim, one seed, every phase shrunk (`--smoke`)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[2] / "bench" / "claims" / "run.py"


def _runner():
    spec = importlib.util.spec_from_file_location("claims_run", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_runner_writes_a_record_per_arm_and_seed_and_a_summary(tmp_path):
    summary = _runner().main(["--claim", "artist", "--seeds", "7", "--smoke",
                              "--out", str(tmp_path)])
    records = {p.name: json.loads(p.read_text()) for p in tmp_path.glob("*_seed7.json")}
    assert set(records) == {"hierarchical_seed7.json", "grpo_seed7.json"}
    for name, rec in records.items():
        assert rec["claim"] == "artist" and rec["seed"] == 7 and rec["arm"] in name
        assert rec["episodes"] == 4 and rec["steps"] == 1
        assert rec["sampled_tokens_per_step"] > 0  # read from the run's step files
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["registered"]["smoke"] is True and saved["seeds"] == [7]
    diff = summary["success_rate"]["paired_difference"]
    arms = summary["success_rate"]["arms"]
    assert math.isclose(diff["mean"], arms["hierarchical"]["mean"] - arms["grpo"]["mean"])
    assert summary["verdict"].startswith("inconclusive")  # one seed proves nothing


def test_paired_summary_and_verdicts():
    import sys

    sys.path.insert(0, str(RUNNER.parent))
    from common import Arm, Claim, summarise

    claim = Claim(name="x", paper="", hypothesis="", metric="m", base=lambda s: {},
                  method=Arm("a", {}), baseline=Arm("b", {}), seeds=(1, 2, 3),
                  budget_minutes=1, eval_episodes=1)
    rows = [{"arm": "a", "seed": s, "m": 0.5 + 0.01 * s} for s in (1, 2, 3)]
    rows += [{"arm": "b", "seed": s, "m": 0.2 + 0.02 * s} for s in (1, 2, 3)]
    out = summarise(claim, rows)
    assert out["verdict"] == "reproduced"
    assert math.isclose(out["m"]["paired_difference"]["mean"], 0.3 - 0.01 * 2)
    flipped = [{**r, "arm": "b" if r["arm"] == "a" else "a"} for r in rows]
    assert summarise(claim, flipped)["verdict"] == "reversed"
    noisy = rows[:3] + [{"arm": "b", "seed": s, "m": v} for s, v in ((1, 0.9), (2, 0.1), (3, 0.6))]
    assert summarise(claim, noisy)["verdict"].startswith("inconclusive")

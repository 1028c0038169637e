"""The claims runner cannot rot: one claim, one seed, every phase shrunk (`--smoke`)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

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


def test_sampled_tokens_counts_each_sampled_turn_once(tmp_path):
    """A fork's copied controller prefix counts once per controller; a first-segment retry
    the credit leaves untrained was still sampled and counts (the first version missed it)."""
    import sys

    sys.path.insert(0, str(RUNNER.parent))
    from common import sampled_tokens

    from envgym.trajectory import Trajectory, Turn, write_trajectories

    def turn(n: int) -> Turn:
        return Turn(action_token_ids=list(range(n)))

    untrained = {"credit": {"trained": [False, False, False, True]}}
    forks = [Trajectory(env_id="e", turns=[turn(5), turn(7), turn(11), turn(3 + s)],
                        meta={"controller_id": "q/c0", "fork_turn": 3, "sample": s, **untrained})
             for s in range(3)]  # prefix 5 + 7 + 11 once, answers 3 + 4 + 5
    flat = Trajectory(env_id="e", turns=[turn(2), turn(13)],
                      meta={"credit": {"trained": [False, True]}})  # a retry, then a zoom
    (tmp_path / "trajectories").mkdir()
    write_trajectories(tmp_path / "trajectories" / "step_000001.jsonl", [*forks, flat])
    got = sampled_tokens(tmp_path, [])["sampled_tokens_per_step"]
    assert got == (5 + 7 + 11) + (3 + 4 + 5) + (2 + 13)


def test_tied_group_signal_counts_only_groups_grpo_leaves_at_zero(tmp_path):
    """A group whose members all have the same return is where GRPO's advantage is exactly 0;
    a group whose failing members differ (format penalties) is not counted at all."""
    import sys

    sys.path.insert(0, str(RUNNER.parent))
    from common import tied_group_signal

    from envgym.trajectory import Trajectory, Turn, write_trajectories

    def member(group: str, reward: float, adv: float) -> Trajectory:
        return Trajectory(env_id="e", group_id=group, turns=[Turn(reward=reward)],
                          meta={"credit": {"advantages": [[adv, 0.0]]}})

    trajs = [member("tied-signal", -0.1, 0.3), member("tied-signal", -0.1, -0.3),
             member("tied-silent", 0.0, 0.0), member("tied-silent", 0.0, 0.0),
             member("untied", -0.2, 0.5), member("untied", 0.0, -0.5)]
    (tmp_path / "trajectories").mkdir()
    write_trajectories(tmp_path / "trajectories" / "step_000001.jsonl", trajs)
    got = tied_group_signal(tmp_path, [])
    assert got == {"tied_groups": 2.0, "tied_with_signal": 0.5}


def test_lower_is_better_verdict_reads_the_right_end_of_the_interval():
    """IFPO's metric falls when it works: a paired interval around 0 is inconclusive, one
    wholly below 0 is reproduced, one wholly above 0 reversed."""
    import sys

    sys.path.insert(0, str(RUNNER.parent))
    from common import Arm, Claim, summarise

    claim = Claim(name="x", paper="", hypothesis="", metric="m", base=lambda s: {},
                  method=Arm("a", {}), baseline=Arm("b", {}), seeds=(1, 2, 3),
                  budget_minutes=1, eval_episodes=1, lower_is_better=True)

    def rows(diffs: list[float]) -> list[dict]:
        return ([{"arm": "a", "seed": s, "m": 0.5 + d} for s, d in enumerate(diffs)]
                + [{"arm": "b", "seed": s, "m": 0.5} for s in range(len(diffs))])

    assert summarise(claim, rows([-0.2, 0.0, 0.2]))["verdict"].startswith("inconclusive")
    assert summarise(claim, rows([-0.21, -0.2, -0.19]))["verdict"] == "reproduced"
    assert summarise(claim, rows([0.19, 0.2, 0.21]))["verdict"] == "reversed"


def _claims_path():
    import sys

    if str(RUNNER.parent) not in sys.path:
        sys.path.insert(0, str(RUNNER.parent))


@pytest.mark.slow
def test_v3_records_carry_provenance_pinned_kwargs_and_the_warm_start(tmp_path):
    """Claims v3 (issue 37): commit, resolved config, every env kwarg and the warm start's own
    evaluation in every record; smoke records never reach bench/claims/records/."""
    _claims_path()
    from common import RECORDS

    before = set(RECORDS.rglob("*_seed7.json")) if RECORDS.exists() else set()
    _runner().main(["--claim", "turn_credit_v3", "--seeds", "7", "--smoke", "--jobs", "2",
                    "--out", str(tmp_path)])
    records = [json.loads(p.read_text()) for p in tmp_path.glob("*_seed7.json")]
    assert {r["arm"] for r in records} == {"mt_grpo", "grpo"}
    for rec in records:
        assert len(rec["commit"]) == 40 and isinstance(rec["dirty_files"], list)
        assert rec["config"]["envs"][0]["kwargs"]["format_rules"] == "artist"
        pinned = rec["env_kwargs_eval"]
        for key in ("series_length", "zoom_points", "point_cost", "exploration_bonus",
                    "first_seg_trials", "max_zoom_span", "format_rules", "max_turns"):
            assert key in pinned, key
        assert rec["episodes_per_step"] == rec["config"]["rollout"]["tasks_per_step"] * \
            rec["config"]["rollout"]["group_size"]
        assert 0 <= rec["first_turn_valid"] <= 1 and 0 <= rec["finish_rate"] <= 1
        assert "warm.first_turn_valid" in rec and "warm.success_rate" in rec
    warm = {(r["warm.first_turn_valid"], r["warm.success_rate"]) for r in records}
    assert len(warm) == 1  # one warm start per seed, evaluated once, in both arms' records
    assert set(RECORDS.rglob("*_seed7.json")) == before if RECORDS.exists() else True


def test_provenance_names_the_commit_the_process_loaded_not_a_later_head(monkeypatch):
    """A commit made while a long claim run goes on must not appear in its later records: the
    process still runs the modules it imported (ig_search_base_v3's seed-15 GRPO record)."""
    _claims_path()
    import common

    heads = iter(["a" * 40, "b" * 40])
    monkeypatch.setattr(common, "_LOADED", {})
    monkeypatch.setattr(common, "_git_provenance",
                        lambda: {"commit": next(heads), "dirty_files": []})
    assert common.provenance()["commit"] == "a" * 40
    assert common.provenance()["commit"] == "a" * 40  # HEAD moved; the loaded code did not


def test_v3_runner_refuses_arms_with_unequal_episodes_per_step():
    _claims_path()
    import pytest
    from common import Arm, Claim, check_fair
    from turn_credit_v3 import base

    claim = Claim(name="x", paper="", hypothesis="", metric="m", base=base,
                  method=Arm("a", {"rollout": {"group_size": 4}}), baseline=Arm("b", {}),
                  seeds=(1,), budget_minutes=1, eval_episodes=1, v3=True)
    with pytest.raises(SystemExit, match="different episodes per step"):
        check_fair(claim, 1)
    same = Claim(name="x", paper="", hypothesis="", metric="m", base=base,
                 method=Arm("a", {"credit": ["turn"]}), baseline=Arm("b", {}),
                 seeds=(1,), budget_minutes=1, eval_episodes=1, v3=True)
    assert check_fair(same, 1) == 48


def test_v3_registered_mde_follows_from_the_stated_noise():
    _claims_path()
    import importlib

    from common import mde, paired_sd
    from scipy import stats

    sd = paired_sd(384, 0.5, 0.042)
    assert math.isclose(sd, math.sqrt(2 * 0.25 / 384 + 0.042 ** 2))
    expected = (stats.t.ppf(0.975, 4) + stats.t.ppf(0.8, 4)) * sd / math.sqrt(5)
    assert math.isclose(mde(sd, 5), expected)
    for name in ("turn_credit_v3", "artist_v3", "ig_search_v3", "ifpo_v3", "gigpo_v3",
                 "artist_base_v3", "ig_search_base_v3"):
        claim = importlib.import_module(name).CLAIM
        assert claim.v3 and len(claim.seeds) >= 5 and claim.metric in claim.mde
        assert claim.eval_episodes >= 384
        assert 0 < claim.mde[claim.metric] < 0.2


def test_committed_v3_records_reproduce_their_summaries_and_the_table():
    """Issue 37: the per-seed records under bench/claims/records/ are the evidence. Their
    summary, rebuilt here, must equal the committed summary.json, cover the registered seeds,
    and its paired difference must be the one docs/claims.md prints (an edited record, a
    dropped seed or a stale table row fails)."""
    _claims_path()
    import importlib

    from common import RECORDS, summarise

    table = (RUNNER.parents[2] / "docs" / "claims.md").read_text()
    done = [p.parent for p in sorted(RECORDS.glob("*_v3/summary.json"))]
    assert len(done) >= 4, [p.name for p in done]
    for folder in done:
        claim = importlib.import_module(folder.name).CLAIM
        records = [json.loads(p.read_text()) for p in sorted(folder.glob("*_seed*.json"))]
        rebuilt = json.loads(json.dumps(summarise(claim, records), default=float))
        committed = json.loads((folder / "summary.json").read_text())
        assert rebuilt[claim.metric] == committed[claim.metric], folder.name
        assert sorted(rebuilt["seeds"]) == sorted(claim.seeds), folder.name
        assert {r["arm"] for r in records} == {claim.method.name, claim.baseline.name}
        assert all(len(r["commit"]) == 40 and f"warm.{claim.metric}" in r for r in records)
        diff = committed[claim.metric]["paired_difference"]
        row = next(line for line in table.splitlines() if line.startswith(f"| `{folder.name}` |"))
        assert f"{diff['mean']:+.3f}" in row or f"{diff['mean']:+.4f}" in row, (folder.name, diff)

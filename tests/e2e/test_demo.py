"""`envgym demo`: a reduced run in CI (the pipeline, the report, the quiet log), the full one
marked slow."""

from __future__ import annotations

import json
import logging
import re
import warnings

import pytest

from envgym.agents.demo import demo


def _record_sandbox_probes(monkeypatch) -> list[str]:
    """Every route to a sandbox backend records its call (a cached backend from an earlier
    test would hide a probe from the backend module's own cache)."""
    import envgym.environments.code.env as code_env
    import envgym.sandbox as sandbox
    import envgym.sandbox.backends as backends

    calls: list[str] = []

    def probe(name="auto"):
        calls.append(str(name))
        raise AssertionError("the demo asked for a sandbox backend")

    for module in (code_env, sandbox, backends):
        monkeypatch.setattr(module, "get_backend", probe)
    return calls


def test_reduced_demo_writes_the_report_and_logs_plain_progress(tmp_path, capsys, caplog,
                                                                 monkeypatch):
    probes = _record_sandbox_probes(monkeypatch)
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        report = demo(tmp_path, steps=2, eval_episodes=6, sft_episodes=12, sft_epochs=1)
    files = {p.name for p in tmp_path.iterdir()} | {p.name for p in (tmp_path / "rl").iterdir()}
    assert {"metrics.json", "reward_curve.png", "report.html", "sft_data.jsonl", "metrics.jsonl",
            "eval_TimeSeries-v0_step0.jsonl", "eval_TimeSeries-v0_step2.jsonl"} <= files
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["reward_sft"]["n"] == 6 and saved["rl_steps"] == 2
    assert saved["eval_seeds"][0] >= 100_000  # held out: outside the training seed range
    assert saved["policy"] == "base"  # the shipped pretrained base is the default
    assert saved["answered_sft"]["episodes"] == 6 and "above_chance" in saved["answered_rl"]
    greedy = saved["greedy"]  # content read from the greedy evaluation's own trajectories
    assert greedy["answered_sft"]["episodes"] == 6 and greedy["answered_rl"]["episodes"] == 6
    assert greedy["content_gain"] == pytest.approx(
        greedy["answered_rl"]["above_chance"] - greedy["answered_sft"]["above_chance"])
    captured = capsys.readouterr()
    last = captured.out.strip().splitlines()[-1]
    assert last.startswith("held-out reward (6 episodes, 95% CI): SFT ") and "-> SFT+RL" in last
    assert report["seconds"]["total"] > 0
    # stderr is not a terminal under pytest: one plain line per phase and per step here
    phases = re.findall(r"^\[demo +\d+ s, cpu +\d+ s\] (\d)/5 ", captured.err, re.M)
    assert phases == ["1", "2", "3", "4", "5"], captured.err
    assert re.search(r"^train step 2/2  reward -?\d", captured.err, re.M), captured.err
    # nothing here runs code, so no sandbox backend was probed or warned about
    said = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    assert not [m for m in said if "sandbox" in m or "bubblewrap" in m], said
    assert probes == []


def test_html_report_is_self_contained(tmp_path):
    demo(tmp_path, steps=1, eval_episodes=4, sft_episodes=4, sft_epochs=1, policy="tiny")
    page = (tmp_path / "report.html").read_text()
    assert page.startswith("<!doctype html>") and "data:image/png;base64," in page
    assert not re.search(r"""(src|href)=["'](https?:|//)""", page)  # opens offline
    assert "<script" not in page
    assert page.count("<div class=pair>") == 3  # three held-out tasks, before and after
    assert page.count("before RL") == 3 and page.count("after RL") == 3
    assert "success rate" in page and "mean reward, 95% CI" in page


@pytest.mark.slow
def test_full_demo_learns_content_from_the_base(tmp_path):
    """The registered claim of docs/demo.md (attempt 17) on its first seed: greedy answered
    accuracy above chance rises by 10 points or more, greedy success with it, in about 7
    minutes of CPU. Seed 0 is the first registered seed, not a chosen one (measured there:
    +8.5 -> +27.5, 367 s of CPU beside another run)."""
    report = demo(tmp_path, seed=0)
    greedy = report["greedy"]
    assert report["policy"] == "base"
    assert greedy["content_gain"] >= 0.10, (greedy["answered_sft"], greedy["answered_rl"])
    assert greedy["success_rl"] > greedy["success_sft"]
    assert report["seconds"]["cpu"] < 480


@pytest.mark.slow
def test_full_tiny_demo_improves_with_non_overlapping_intervals(tmp_path):
    report = demo(tmp_path, policy="tiny")
    assert report["improved"], (report["reward_sft"], report["reward_rl"])
    assert report["reward_rl"]["lo"] > report["reward_sft"]["hi"]
    assert report["success_rl"] - report["success_sft"] >= 0.15
    assert report["seconds"]["total"] < 360


def test_answered_accuracy_above_chance_ignores_unanswered_episodes():
    """Content apart from form: 2 answered (one right at chance 0.25, one wrong at chance
    0.5) and 2 unanswered give (0.75 - 0.5) / 2 over the answered, not over all four."""
    from envgym.agents.demo import answered
    from envgym.trajectory import Trajectory

    def traj(answer, score, chance):
        return Trajectory(env_id="x", seed=0, outcome={"answer": answer, "score": score,
                                                       "chance": chance})

    got = answered([traj("A", 1.0, 0.25), traj("B", 0.0, 0.5), traj(None, 0.0, 0.25),
                    traj(None, 0.0, 0.5)])
    assert got["answered"] == 2 and got["answered_rate"] == 0.5
    assert got["above_chance"] == pytest.approx(0.125)
    assert answered([traj(None, 0.0, 0.25)])["above_chance"] == 0.0


def test_demo_refuses_an_unknown_policy(tmp_path):
    from envgym.agents.demo import demo_config
    from envgym.errors import InvalidConfig
    with pytest.raises(InvalidConfig, match="base"):
        demo_config(tmp_path, policy="huge")


def _numbers(report: dict) -> dict:
    """Everything the report measured, without wall-clock and CPU seconds."""
    return {k: v for k, v in report.items() if k != "seconds"}


def test_same_seed_gives_the_same_report(tmp_path):
    kwargs = dict(steps=2, eval_episodes=6, sft_episodes=12, sft_epochs=1, policy="tiny")
    first = demo(tmp_path / "a", seed=5, **kwargs)
    again = demo(tmp_path / "b", seed=5, **kwargs)
    a = json.loads((tmp_path / "a" / "metrics.json").read_text())
    b = json.loads((tmp_path / "b" / "metrics.json").read_text())
    config_a, config_b = a.pop("config"), b.pop("config")
    assert config_a.pop("output_dir") != config_b.pop("output_dir")
    assert config_a == config_b and _numbers(a) == _numbers(b)
    assert first["seed"] == again["seed"] == 5
    other = demo(tmp_path / "c", seed=6, **kwargs)
    assert other["sft_loss_per_epoch"] != first["sft_loss_per_epoch"]  # the seed is used


def test_demo_exit_status_is_the_run_not_the_verdict(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    import envgym.agents.demo as demo_module
    from envgym.cli import app

    monkeypatch.setattr(demo_module, "demo", lambda out, **kw: {"improved": False, **kw})
    runner = CliRunner()
    plain = runner.invoke(app, ["demo", "--out", str(tmp_path), "--seed", "3"])
    assert plain.exit_code == 0, plain.output
    strict = runner.invoke(app, ["demo", "--out", str(tmp_path), "--require-improvement"])
    assert strict.exit_code == 1


def test_shipped_demo_config_trains_what_the_demo_trains(tmp_path):
    """`agents/configs/demo_cpu.toml` is the demo's run for `envgym train`: every setting that
    shapes learning or its measurement must match `demo_config` (it once drifted: 96 held-out
    tasks and a constant learning rate against the demo's 192 and cosine)."""
    from pathlib import Path

    from envgym.agents.config import load_config
    from envgym.agents.demo import demo_config

    shipped = load_config(Path(__file__).parents[2] / "agents/configs/demo_cpu.toml")
    ours = load_config(demo_config(tmp_path))
    assert shipped.steps == ours.steps and shipped.seed == ours.seed
    for part in ("model", "rollout", "ppo", "optim", "sft"):
        assert getattr(shipped, part) == getattr(ours, part), part
    assert shipped.credit == ours.credit and shipped.credit_options == ours.credit_options
    mine, theirs = shipped.envs[0], ours.envs[0]
    assert (mine.id, mine.kwargs, mine.train_seeds, mine.eval_seeds) == \
        (theirs.id, theirs.kwargs, theirs.train_seeds, theirs.eval_seeds)


def test_base_recipe_warms_up_the_rl_rate(tmp_path):
    """The base's RL rate starts at a tenth and reaches 4e-4 at step 10: without the warm-up
    AdamW's first step moved single action tokens' log-probs by up to 9 nats (step-1 KL up to
    47 nats per token, docs/demo.md attempt 17). The tiny model keeps its validated schedule."""
    from envgym.agents.config import load_config
    from envgym.agents.demo import demo_config
    from envgym.agents.learner import lr_lambda

    base = load_config(demo_config(tmp_path))
    factor = lr_lambda(base.optim, base.steps)
    assert factor(0) == pytest.approx(0.1) and factor(9) == pytest.approx(1.0)
    assert factor(base.steps) == pytest.approx(0.0)  # still decays to 0 at the last step
    tiny = load_config(demo_config(tmp_path, policy="tiny"))
    assert lr_lambda(tiny.optim, tiny.steps)(0) == 1.0

"""TimeSeries-v0's grader under attack: its fixtures pin the rules (a weakened grader fails
them), every hack stays under its ceiling with the arguments of every shipped config, and the
exploration bonus is ranked apart from the task reward."""

import glob
import tomllib
from pathlib import Path

import pytest

import envgym
from envgym.evaluation import evaluate
from envgym.graders import run_fixtures
from envgym.hacks import hack_names, run_hacks
from envgym.registration import make
from envgym.environments.timeseries import env as ts_env
from envgym.environments.timeseries.grader_fixtures import fixtures

ENV = "envgym/TimeSeries-v0"
CONFIGS = Path(__file__).resolve().parents[2] / "agents" / "configs"


def _failures() -> list[str]:
    return [r.name for r in run_fixtures(fixtures(), lambda **kw: make(ENV, **kw)) if not r.ok]


def _shipped_kwargs() -> dict[str, dict]:
    """Distinct TimeSeries-v0 arguments (train kwargs with eval_kwargs over them) per config."""
    found: dict[str, dict] = {"defaults": {}}
    for path in sorted(glob.glob(str(CONFIGS / "*.toml"))):
        for entry in tomllib.loads(Path(path).read_text()).get("envs", []):
            if entry["id"] == ENV:
                for key in ("kwargs", "eval_kwargs"):
                    kw = {**entry.get("kwargs", {}), **entry.get(key, {})}
                    if kw not in found.values():
                        found[f"{Path(path).stem}:{key}"] = kw
    return found


def test_the_shipped_fixtures_all_pass():
    assert _failures() == []


@pytest.mark.parametrize("weaken", ["no_span_cap", "no_down_sampling", "bonus_in_task_return",
                                    "always_correct", "answer_first"])
def test_a_weakened_grader_fails_its_fixtures(monkeypatch, weaken):
    if weaken == "no_span_cap":
        monkeypatch.setattr(ts_env.TimeSeriesEnv, "_span_cap", lambda self: 10**9)
    elif weaken == "no_down_sampling":
        monkeypatch.setattr(ts_env.TimeSeriesEnv, "__init__", _patched_init(zoom_points=10**6))
    elif weaken == "bonus_in_task_return":
        monkeypatch.setattr(ts_env.TimeSeriesEnv, "shaping_components", ())
    elif weaken == "always_correct":
        monkeypatch.setattr(ts_env.TimeSeriesEnv, "_letter", lambda self, a: self.task.answer)
    else:
        monkeypatch.setattr(ts_env.TimeSeriesEnv, "__init__", _patched_init(require_first_zoom=False))
    assert _failures(), f"fixtures did not notice {weaken}"


def _patched_init(**forced):
    original = ts_env.TimeSeriesEnv.__init__

    def init(self, **kwargs):
        original(self, **{**kwargs, **forced})
    return init


def test_shipped_configs_give_distinct_argument_sets_to_attack():
    kws = _shipped_kwargs()
    assert len(kws) >= 3 and any(kw.get("max_rounds") == 2 for kw in kws.values())


@pytest.mark.parametrize("name", list(_shipped_kwargs()))
def test_every_hack_stays_under_its_ceiling_under_every_shipped_config(name):
    results = run_hacks(ENV, episodes=100, seed=0, env_kwargs=_shipped_kwargs()[name])
    assert {r.hack for r in results} >= {"hack_blind_scan", "hack_max_scan", "hack_junk_zoom",
                                          "hack_overview", "hack_wide_zoom"}
    assert [r.render() for r in results if not r.ok] == []
    assert all("mean_reward" in r.limits for r in results)  # every ceiling bounds reward


def test_evaluation_ranks_on_task_reward_and_reports_the_bonus_apart():
    padded = evaluate(ENV, "scripted:hack_junk_zoom", episodes=30)
    oracle = evaluate(ENV, "scripted:oracle", episodes=30)
    # issue 36: a junk zoom adds no unseen evidence, so it cannot buy the bonus any more,
    # and padding loses on the reward training optimises, not only on the task reward
    assert padded["shaping_reward"] <= oracle["shaping_reward"]
    assert padded["train_reward"] < oracle["train_reward"]
    assert padded["mean_reward"] < oracle["mean_reward"]
    assert padded["mean_reward"] == pytest.approx(padded["train_reward"] - padded["shaping_reward"])


def test_a_blind_scan_with_default_arguments_stays_well_short_of_the_evidence():
    blind = evaluate(ENV, "scripted:hack_max_scan", episodes=100)
    assert blind["success_rate"] < 0.9
    env = envgym.make(ENV)
    env.reset(seed=0)
    assert env.zoom_points * env.max_rounds < len(env.task.series) / 4  # full detail is rare


def test_the_hack_list_includes_the_three_attack_classes():
    assert {"hack_blind_scan", "hack_max_scan", "hack_junk_zoom"} <= set(hack_names(ENV))

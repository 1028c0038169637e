"""Issue 37 item 2 and issue 36's TimeSeries item, under every shipped config.

A well-formed zoom onto unseen evidence must earn more turn reward than a junk turn (with the
core's flat -0.1 format penalty it earned less, and turn-level credit was reversed on the zoom
that decides the episode), and padding the oracle with a junk 2-point zoom must not raise the
reward training optimises (the exploration bonus used to pay for it)."""

import json
import tomllib
from pathlib import Path

import pytest

import envgym
from envgym.environments.timeseries.env import ZOOM

ENV = "envgym/TimeSeries-v0"
CONFIG_DIR = Path(__file__).resolve().parents[2] / "agents" / "configs"


def _shipped() -> list[tuple[str, dict]]:
    found = []
    for path in sorted(CONFIG_DIR.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        for env in data.get("envs", []):
            if env.get("id") == ENV:
                found.append((path.stem, dict(env.get("kwargs", {}))))
    return found


CONFIGS = [("defaults", {})] + _shipped()


def _zoom(env, start, end):
    if env.tool_format == "tag":
        return f"<think>look</think><zoom>[{start}, {end}]</zoom>"
    call = json.dumps({"name": ZOOM, "arguments": {"ts_seg": [start, end]}})
    return f"<think>look</think><tool_call>{call}</tool_call>"


def _first_turn(kwargs, seed, action) -> tuple[float, dict]:
    env = envgym.make(ENV, **kwargs)
    env.reset(seed=seed)
    _, reward, *_, info = env.step(action(env))
    return reward, info


def test_the_shipped_configs_are_found():
    assert len(CONFIGS) >= 5, CONFIGS


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_an_informative_zoom_out_earns_a_junk_turn_under_every_config(name, kwargs):
    for seed in range(8):
        def evidence_zoom(env):
            s, e = env.task.evidence[0]
            return _zoom(env, s, min(e, s + env._span_cap() - 1))

        def widest(env):  # the costliest valid zoom: a full span
            return _zoom(env, 0, env._span_cap() - 1)

        good, info = _first_turn(kwargs, seed, evidence_zoom)
        assert info["new_evidence"] > 0 and "parse_error" not in info
        wide, _ = _first_turn(kwargs, seed, widest)
        for junk in ("no call at all", "<zoom>one, two</zoom>", _zoom_json_broken):
            bad, binfo = _first_turn(kwargs, seed, lambda env: junk if isinstance(junk, str)
                                     else junk(env))
            assert "parse_error" in binfo
            assert good > bad + 0.05 and wide > bad + 0.05, (name, seed, good, wide, bad)


def _zoom_json_broken(env):
    return '<think>x</think><tool_call>{"name": "' + ZOOM + '", "arguments": {"ts_seg": [5]}}</tool_call>'


def _play(kwargs, seed, plan) -> float:
    env = envgym.make(ENV, **kwargs)
    env.reset(seed=seed)
    total = 0.0
    for act in plan:
        _, reward, term, trunc, _ = env.step(act(env))
        total += reward
        if term or trunc:
            break
    return total


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_a_junk_zoom_never_gains_on_the_training_reward(name, kwargs):
    def ev(k):
        return lambda env: _zoom(env, *env.task.evidence[min(k, len(env.task.evidence) - 1)])

    def junk(env):
        n = len(env.task.series)
        return _zoom(env, n - 2, n - 1)

    def gold(env):
        return f"<think>seen</think><answer>{env.task.answer}</answer>"

    checked = 0
    for seed in range(12):
        env = envgym.make(ENV, **kwargs)
        env.reset(seed=seed)
        rounds = min(len(env.task.evidence), env.max_rounds)
        oracle = [ev(k) for k in range(rounds)]
        if rounds >= env.max_rounds:
            continue  # no round left to pad
        honest = _play(kwargs, seed, [*oracle, gold])
        padded = _play(kwargs, seed, [*oracle, junk, gold])
        assert padded <= honest, (name, seed, honest, padded)
        checked += 1
    assert checked >= 3

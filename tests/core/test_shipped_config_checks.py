"""Every shipped training config passes `envgym check --config` (hacks and grader fixtures).

Defaults that hold prove nothing about the arguments a run trains with (issue 24: a hack
beat its ceiling only under a shipped config's arguments). For each `[[envs]]` entry of each
config in `agents/configs/`, under its training kwargs and under kwargs | eval_kwargs, every
`hack_*` policy must stay under its ceiling (reward included) and every grader fixture hold.
The full `envgym check --config` plays 100 episodes per hack; this plays EPISODES, enough to
catch the gaps seen so far (each of them beat its ceiling by far more than sampling noise).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envgym.checker import check_config, config_variants

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "agents" / "configs").glob("*.toml"))
EPISODES = 100
# Environments whose episodes are expensive on CPU (sandboxed programs; a MiniLM encoder per
# question) play fewer: their hacks so far earned all-or-nothing gaps, not marginal ones.
FEWER = {"envgym/CodeRefine-v0": 10, "envgym/Consult-v0": 10}


def _params() -> list:
    """(config, env id) pairs read straight from the TOML, so collection stays cheap."""
    out = []
    for path in CONFIGS:
        ids = dict.fromkeys(e["id"] for e in tomllib.loads(path.read_text()).get("envs", []))
        out += [pytest.param(path, env_id, id=f"{path.stem}:{env_id.split('/')[-1]}")
                for env_id in ids]
    return out


def test_the_configs_are_found():
    assert len(CONFIGS) >= 5 and len(_params()) >= len(CONFIGS)


@pytest.mark.parametrize("path,env_id", _params())
def test_hacks_and_grader_fixtures_hold_under_the_shipped_config(path, env_id):
    variants = config_variants(path, env_id)
    episodes = FEWER.get(env_id, EPISODES)
    reports = check_config(path, env_id, hack_episodes=episodes, only=["graders", "hacks"])
    assert len(reports) == len(variants) >= 1
    for report in reports:
        text = report.render()
        assert report.ok, text
        assert {name for name, _, _ in report.results} == {"graders", "hacks"}, text
        assert "WARNING" not in text, text  # every environment ships hacks and fixtures

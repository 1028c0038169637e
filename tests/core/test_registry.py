import json
import os
import subprocess
import sys
import textwrap

import gymnasium
import pytest

import envgym
from envgym.errors import RegistrationError, UnknownEnvironment


def test_builtin_environment_is_registered_with_gymnasium_too():
    assert "envgym/TimeSeries-v0" in envgym.registry()
    env = gymnasium.make("envgym/TimeSeries-v0")
    obs, info = env.reset(seed=1)
    assert info["task_id"] and obs[0]["role"] == "system"
    env.close()


def test_make_overrides_defaults():
    env = envgym.make("envgym/TimeSeries-v0", series_length=400, max_rounds=2)
    assert env.series_length == 400 and env.max_rounds == 2


def test_unknown_id_suggests_close_matches():
    with pytest.raises(UnknownEnvironment, match="Did you mean: `envgym/TimeSeries-v0`"):
        envgym.make("envgym/TimeSeries-v1")


def test_malformed_id_is_rejected():
    with pytest.raises(RegistrationError, match="namespace/Name-vN"):
        envgym.register("no version here", "x:y")


def test_third_party_entry_point_appears_in_list(tmp_path):
    pkg = tmp_path / "throwaway_envs"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        import envgym
        def register():
            envgym.register("thirdparty/Echo-v0",
                            "envgym.environments.timeseries.env:TimeSeriesEnv",
                            description="a plugin environment")
    """))
    dist = tmp_path / "throwaway_envs-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: throwaway-envs\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[envgym.environments]\necho = throwaway_envs:register\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "envgym.cli", "list", "--json"],
                            capture_output=True, text=True, env=env, check=True)
    ids = {row["id"]: row for row in json.loads(result.stdout)}
    assert ids["thirdparty/Echo-v0"]["description"] == "a plugin environment"
    assert "envgym/TimeSeries-v0" in ids

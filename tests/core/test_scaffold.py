"""`envgym init`: the package it writes installs, registers, passes `envgym check` (hacks
included) and its own tests, with no edits; bad names and occupied directories are refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from envgym.errors import InvalidConfig
from envgym.scaffold import env_id_for, init

def _install(package: Path, target: Path) -> dict[str, str]:
    """pip-install the package (no deps: envgym is already here) into `target`; the env for
    subprocesses that should see it, as an installed distribution with its entry point."""
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(package)],
                   check=True, capture_output=True, timeout=300)
    return {**os.environ, "PYTHONPATH": str(target)}


def _envgym(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envgym.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("multi_agent", [False, True], ids=["single", "multi"])
def test_scaffold_installs_registers_checks_and_passes_its_tests(tmp_path, multi_agent):
    name = "demo_multi" if multi_agent else "demoenv"
    package = tmp_path / "pkg"
    done = _envgym(["init", name, "--dir", str(package)] + ["--multi-agent"] * multi_agent,
                   dict(os.environ), tmp_path)
    assert done.returncode == 0, done.stderr
    assert {p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file()} == {
        "pyproject.toml", "README.md", f"{name}/__init__.py", f"{name}/env.py",
        f"{name}/policies.py", "tests/test_env.py"}
    assert '[project.entry-points."envgym.environments"]' in (package / "pyproject.toml").read_text()
    env = _install(package, tmp_path / "site")
    env_id = env_id_for(name)
    listed = _envgym(["list", "--json"], env, tmp_path)
    assert env_id in listed.stdout, listed.stdout + listed.stderr
    checked = _envgym(["check", env_id], env, tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "[PASS] hacks: 1 hacks stay under their ceilings" in checked.stdout
    assert "[FAIL]" not in checked.stdout and "too short" not in checked.stdout
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            str(package / "tests")], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=600)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert " passed" in tests.stdout and "failed" not in tests.stdout


def test_the_hack_loses_because_the_grader_is_strict(tmp_path):
    """The starter's own attack: a lenient grader (total anywhere in the answer) would pay
    `hack_spray` every time; ours calls it a format error."""
    package = tmp_path / "pkg"
    init("ledger_x", package)
    sys.path.insert(0, str(package))
    try:
        from ledger_x.env import LedgerXEnv
        from ledger_x.policies import HackSprayPolicy

        env = LedgerXEnv()
        env.reset(seed=0)
        action = HackSprayPolicy(0).act(env, [])
        assert str(sum(env.entries)) in action  # the total is in there...
        _, reward, terminated, _, info = env.step(action)
        assert reward < 0 and not terminated and "one integer" in info["parse_error"]  # ...unpaid
    finally:
        sys.path.remove(str(package))
        for mod in [m for m in sys.modules if m == "ledger_x" or m.startswith("ledger_x.")]:
            del sys.modules[mod]


@pytest.mark.parametrize("name", ["9lives", "My-Env", "class", "envgym", ""])
def test_bad_names_are_refused(tmp_path, name):
    with pytest.raises(InvalidConfig):
        init(name, tmp_path / "x")


def test_a_non_empty_directory_is_not_overwritten(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InvalidConfig, match="not empty"):
        init("demoenv", tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    init("demoenv", tmp_path, force=True)
    assert (tmp_path / "demoenv" / "env.py").is_file() and (tmp_path / "notes.txt").exists()

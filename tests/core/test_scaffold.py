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
        f"{name}/policies.py", "tests/test_env.py"} | (
        set() if multi_agent else {f"{name}/grader_fixtures.py"})
    assert '[project.entry-points."envgym.environments"]' in (package / "pyproject.toml").read_text()
    env = _install(package, tmp_path / "site")
    env_id = env_id_for(name)
    listed = _envgym(["list", "--json"], env, tmp_path)
    assert env_id in listed.stdout, listed.stdout + listed.stderr
    checked = _envgym(["check", env_id], env, tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "[PASS] hacks: 1 hacks stay under their ceilings" in checked.stdout
    assert "[FAIL]" not in checked.stdout and "too short" not in checked.stdout
    if not multi_agent:  # the single-agent starter ships its grader fixtures
        assert "[PASS] graders: 6 grader fixtures hold" in checked.stdout, checked.stdout
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


def test_the_default_folder_is_never_the_package_name(tmp_path, monkeypatch):
    """Issue 35: `./maze_env` beside a script imports as a namespace package and hides the
    installed plugin; the default folder is `./maze-env`."""
    from envgym.scaffold import default_dir

    assert default_dir("maze_env") == "maze-env" and default_dir("maze") == "maze-plugin"
    monkeypatch.chdir(tmp_path)
    written = init("maze_env")
    assert all(p.parts[0] == "maze-env" for p in written)
    assert (tmp_path / "maze-env" / "maze_env" / "grader_fixtures.py").is_file()


def test_a_folder_named_like_the_package_gets_a_warning_saying_what_to_do(tmp_path, capsys):
    from envgym.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["init", "maze_env", "--dir", str(tmp_path / "maze_env")])
    assert stop.value.code in (0, None)
    err = " ".join(capsys.readouterr().err.split())
    assert "warning: the folder" in err and "has no attribute 'register'" in err
    assert str(tmp_path / "maze-env") in err
    with pytest.raises(SystemExit):
        main(["init", "other_env", "--dir", str(tmp_path / "other-env")])
    assert "warning" not in capsys.readouterr().err


def test_a_plugin_shadowed_by_a_folder_says_why(tmp_path, monkeypatch):
    """The load failure names the folder that shadowed the plugin and the fix."""
    import importlib
    import sys

    from envgym.registration import _shadowing_hint

    (tmp_path / "shadowed_env").mkdir()  # a bare folder: a namespace package
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "shadowed_env", raising=False)
    importlib.import_module("shadowed_env")
    hint = _shadowing_hint("shadowed_env:register")
    assert "namespace package" in hint and str(tmp_path / "shadowed_env") in hint
    assert "shadowed-env" in hint
    assert _shadowing_hint("envgym:register") == ""  # a real package: nothing to add

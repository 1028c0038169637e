"""Backend selection, the subprocess warning, unavailable backends, and the CLI."""

import json
import logging

import pytest
from typer.testing import CliRunner

from envgym.errors import SandboxUnavailable
from envgym.sandbox import get_backend
from envgym.sandbox.backends import bwrap as bwrap_mod
from envgym.sandbox.backends.subprocess_ import SandboxNotIsolatedWarning, SubprocessBackend
from envgym.sandbox.cli import app


def test_auto_prefers_bwrap_when_its_probe_passes(bwrap):
    backend = get_backend("auto")
    assert backend.name == "bwrap" and backend.isolated


def test_subprocess_backend_warns_it_is_not_isolated(caplog):
    with caplog.at_level(logging.WARNING, logger="envgym.sandbox"):
        with pytest.warns(SandboxNotIsolatedWarning, match="NOT a security boundary"):
            backend = SubprocessBackend()
    assert not backend.isolated and "NOT a security boundary" in caplog.text


def test_missing_bwrap_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(bwrap_mod.shutil, "which", lambda name: None)
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        bwrap_mod.BwrapBackend()


def test_broken_bwrap_fails_its_probe(tmp_path, monkeypatch):
    monkeypatch.setattr(bwrap_mod, "can_switch_uid", lambda: False)
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(SandboxUnavailable, match="apparmor_restrict_unprivileged_userns"):
        bwrap_mod.BwrapBackend(str(fake))


def test_unknown_backend_is_a_config_error():
    from envgym.errors import InvalidConfig

    with pytest.raises(InvalidConfig):
        get_backend("chroot")


@pytest.mark.docker
def test_docker_backend_runs_python_with_no_network():
    try:
        backend = get_backend("docker")
    except SandboxUnavailable as exc:
        pytest.skip(f"no Docker engine or image: {exc}")
    from envgym.sandbox import run

    ex = run("import socket\nprint(sorted(n for _, n in socket.if_nameindex()))", "python",
             backend=backend)
    assert ex.stdout.strip() == "['lo']"


def test_cli_run_json_reports_every_field(bwrap, tmp_path):
    prog = tmp_path / "rev.py"
    prog.write_text("print(input()[::-1])")
    stdin = tmp_path / "in.txt"
    stdin.write_text("abc\n")
    result = CliRunner().invoke(app, ["run", str(prog), "--stdin", str(stdin), "--json",
                                      "--backend", "bwrap"])
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    for key in ("verdict", "stdout", "stderr", "exit_code", "signal", "wall_time", "cpu_time",
                "memory_kb", "truncated", "backend"):
        assert key in out
    assert out["verdict"] == "AC" and out["stdout"] == "cba\n" and out["backend"] == "bwrap"


def test_cli_exit_status_is_zero_for_a_tle(bwrap, tmp_path):
    prog = tmp_path / "loop.py"
    prog.write_text("while True: pass")
    result = CliRunner().invoke(app, ["run", str(prog), "--json", "--time-limit", "0.5"])
    assert result.exit_code == 0 and json.loads(result.stdout)["verdict"] == "TLE"


def test_cli_judge_reads_jsonl_tests(bwrap, tmp_path):
    prog = tmp_path / "add.cpp"
    prog.write_text("#include <cstdio>\nint main(){int a,b;scanf(\"%d%d\",&a,&b);"
                    "printf(\"%d\\n\",a+b);}")
    tests = tmp_path / "t.jsonl"
    tests.write_text('{"input": "1 2", "output": "3"}\n{"input": "2 2", "output": "5"}\n')
    result = CliRunner().invoke(app, ["judge", str(prog), "--tests", str(tests), "--json"])
    out = json.loads(result.stdout)
    assert result.exit_code == 0 and out["verdict"] == "WA" and out["passed"] == 1


def test_cli_unknown_extension_needs_lang(tmp_path):
    prog = tmp_path / "x.rb"
    prog.write_text("puts 1")
    result = CliRunner().invoke(app, ["run", str(prog)])
    assert result.exit_code == 2 and "--lang" in result.output

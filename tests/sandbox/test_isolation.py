"""What the sandbox shows a program, and that nothing runs unisolated by accident."""

import glob
import os
import warnings

import pytest

from envgym.errors import SandboxUnavailable
from envgym.sandbox import get_backend, reset_backends, run
from envgym.sandbox.backends import UNSAFE_ENV
from envgym.sandbox.backends import bwrap as bwrap_mod
from envgym.sandbox.backends.bwrap import hidden_dirs


@pytest.fixture
def no_bwrap(monkeypatch):
    which = bwrap_mod.shutil.which
    monkeypatch.setattr(bwrap_mod.shutil, "which",
                        lambda name: None if name == "bwrap" else which(name))
    monkeypatch.delenv(UNSAFE_ENV, raising=False)
    reset_backends()
    yield
    reset_backends()


def test_auto_without_bwrap_refuses_and_says_how_to_fix_it(no_bwrap):
    with pytest.raises(SandboxUnavailable) as err:
        get_backend("auto")
    msg = str(err.value)
    assert "apt-get install bubblewrap" in msg and "docker" in msg and UNSAFE_ENV in msg


def test_auto_falls_back_only_when_the_user_opts_in(no_bwrap, monkeypatch):
    monkeypatch.setenv(UNSAFE_ENV, "1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backend = get_backend("auto")
    assert backend.name == "subprocess" and not backend.isolated


def test_code_env_refuses_an_unisolated_backend_unless_allowed(monkeypatch):
    from envgym.environments.code import CodeRefineEnv

    monkeypatch.delenv(UNSAFE_ENV, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SandboxUnavailable, match="allow_unsafe_sandbox=True"):
            CodeRefineEnv(backend="subprocess")
        env = CodeRefineEnv(backend="subprocess", allow_unsafe_sandbox=True)
    assert not env._backend.isolated
    env.close()


def test_package_folders_under_a_bound_tree_are_hidden(tmp_path):
    for rel in ("lib/python3.11/site-packages/envgym", "lib/python3/dist-packages/x",
                "local/lib/python3.12/dist-packages", "lib/python3.11/json"):
        (tmp_path / rel).mkdir(parents=True)
    got = hidden_dirs([str(tmp_path)])
    assert str(tmp_path / "lib/python3.11/site-packages") in got
    assert str(tmp_path / "lib/python3/dist-packages") in got
    assert str(tmp_path / "local/lib/python3.12/dist-packages") in got
    assert not any(p.endswith("json") for p in got)  # the standard library stays


def test_extra_hidden_paths_come_from_the_environment(tmp_path, monkeypatch):
    data = tmp_path / "share" / "datasets"
    data.mkdir(parents=True)
    monkeypatch.setenv("ENVGYM_SANDBOX_HIDE", str(data))
    assert hidden_dirs([str(tmp_path)]) == [str(data)]


def test_host_package_folders_look_empty_inside(bwrap):
    host = [p for pattern in ("/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages")
            for p in glob.glob(pattern) if os.listdir(p)]
    if not host:
        pytest.skip("this host has no non-empty package folder under /usr to hide")
    src = (f"import os\nfor p in {host!r}:\n"
           "    print(p, os.listdir(p) if os.path.isdir(p) else None)")
    out = run(src, "python", backend=bwrap).stdout.splitlines()
    assert len(out) == len(host) and all(line.endswith(("[]", "None")) for line in out), out


def test_the_program_cannot_see_the_envgym_checkout(bwrap):
    import envgym

    pkg = os.path.dirname(os.path.realpath(envgym.__file__))
    src = (f"import os\nprint(os.path.exists({pkg!r}), os.path.exists({os.getcwd()!r}))\n"
           "import importlib.util\nprint(importlib.util.find_spec('envgym'))")
    assert run(src, "python", backend=bwrap).stdout.split() == ["False", "False", "None"]

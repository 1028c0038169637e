"""The Docker backend against a fake client that enforces the engine's documented semantics,
so it runs without an engine:

* the archive API refuses a read-only root filesystem, and paths under a tmpfs (invisible to
  the daemon); it works on a volume;
* `exec_run(demux=False)` interleaves stderr into stdout; `demux=True` separates them;
* root without capabilities cannot remove what the program (uid 65534) made read-only.

The fake runs the real in-container supervisor on the host, on a host directory that stands
for the `/box` volume, so verdicts are real.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import threading
from types import SimpleNamespace

import pytest

pytest.importorskip("docker")

from envgym.sandbox import run  # noqa: E402
from envgym.sandbox._supervise import supervise  # noqa: E402
from envgym.sandbox.backends.docker_ import DockerBackend, _parse  # noqa: E402


def _extract_trusted(tar: tarfile.TarFile, dest: str) -> None:
    """Unpack our own archives as Docker would (modes and owners kept). `filter=` arrived in
    Python 3.11.4 (and 3.10.12); older interpreters extract that way without it."""
    if hasattr(tarfile, "fully_trusted_filter"):
        tar.extractall(dest, filter="fully_trusted")
    else:
        tar.extractall(dest)


class APIError(Exception):
    """Stands for docker.errors.APIError."""


class FakeContainer:
    def __init__(self, client: FakeClient, kwargs: dict):
        self.client, self.kwargs = client, kwargs
        self.id = f"c{len(client.created)}"
        self.volumes = {m["Target"] for m in kwargs.get("mounts", []) if m["Type"] == "volume"}
        self.tmpfs = set(kwargs.get("tmpfs", {}))
        self.root = tempfile.mkdtemp(prefix="fake-docker-")  # what /box holds
        self.removed = False
        self.owned_by_program: set[str] = set()

    # -- the archive API ------------------------------------------------------------------
    def _host(self, path: str) -> str:
        for mount in self.volumes:
            if path == mount or path.startswith(mount + "/"):
                return os.path.join(self.root, os.path.relpath(path, mount))
        if any(path == t or path.startswith(t + "/") for t in self.tmpfs):
            raise APIError(f"{path}: the archive API cannot reach a tmpfs mount")
        if self.kwargs.get("read_only"):
            raise APIError(f"{path}: container rootfs is marked read-only")
        raise APIError(f"{path}: no such directory in this fake")

    def put_archive(self, path: str, data: bytes) -> bool:
        dest = self._host(path)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            _extract_trusted(tar, dest)
        return True

    def get_archive(self, path: str):
        src = self._host(path)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(src, arcname=os.path.basename(path))
        return iter([buf.getvalue()]), {}

    # -- exec -----------------------------------------------------------------------------
    def exec_run(self, cmd: list[str], user: str = "", demux: bool = False):
        if self.client.exec_fails(self):
            raise APIError("exec: the container is gone")
        if "supervise.py" in " ".join(cmd):
            stdout = json.dumps(self._supervise(cmd[-1])).encode()
            stderr = b"/usr/lib/python3/warnings.py: DeprecationWarning: noise on stderr\n"
            out = (stdout, stderr) if demux else stderr + stdout
            return SimpleNamespace(exit_code=0, output=out)
        if cmd[0] == "sh" and "rm -rf" in cmd[-1]:
            box = cmd[-1].split("rm -rf ")[-1]
            self._rm(self._host(box), user)
            return SimpleNamespace(exit_code=0, output=(b"", b"") if demux else b"")
        if cmd[:2] == ["test", "!"]:
            gone = not os.path.exists(self._host(cmd[-1]))
            return SimpleNamespace(exit_code=0 if gone else 1, output=(b"", b""))
        return SimpleNamespace(exit_code=0, output=(b"", b"") if demux else b"")

    def _supervise(self, spec_path: str) -> dict:
        with open(self._host(spec_path)) as fh:
            spec = json.load(fh)
        box = os.path.dirname(self._host(spec_path))
        before = set(os.listdir(box))
        argv = [sys.executable if a == "python3" else a for a in spec["argv"]]
        env = {k: v.replace(spec["cwd"], box) for k, v in spec["env"].items()}
        with open(os.path.join(box, "stdin"), "rb") as fh:
            stdin = fh.read()
        result = supervise(argv, stdin=stdin, cwd=box, env=env, rlimits=spec["rlimits"],
                           wall_s=spec["wall_s"], stdout_cap=spec["stdout_cap"],
                           stderr_cap=spec["stderr_cap"])  # as the host's uid, not 65534
        self.owned_by_program |= {os.path.join(box, f) for f in set(os.listdir(box)) - before}
        return result

    def _rm(self, path: str, user: str) -> None:
        caps = set(self.kwargs.get("cap_add", []))
        if user == "0" and "DAC_OVERRIDE" not in caps and self.owned_by_program & _tree(path):
            return  # EACCES on the program's read-only files: the box stays
        shutil.rmtree(path, ignore_errors=True)

    def remove(self, force: bool = False, v: bool = False) -> None:
        self.removed = True
        shutil.rmtree(self.root, ignore_errors=True)


def _tree(path: str) -> set[str]:
    out = set()
    for d, dirs, files in os.walk(path):
        out |= {os.path.join(d, x) for x in dirs + files}
    return out


class FakeClient:
    def __init__(self, failing: int = 0):
        self.created: list[FakeContainer] = []
        self.failing = failing  # the first N containers die on their first exec
        self.lock = threading.Lock()
        self.containers = SimpleNamespace(run=self._run)
        self.images = SimpleNamespace(get=lambda image: object())

    def _run(self, image, command, **kwargs):
        kwargs["mounts"] = [dict(m) for m in kwargs.get("mounts", [])]
        with self.lock:
            container = FakeContainer(self, kwargs)
            self.created.append(container)
        return container

    def exec_fails(self, container: FakeContainer) -> bool:
        return self.created.index(container) < self.failing


@pytest.fixture
def backend():
    made = []

    def make(**kw):
        b = DockerBackend(client=kw.pop("client", FakeClient()), **kw)
        made.append(b)
        return b
    yield make
    for b in made:
        b.close()


def test_containers_are_locked_down_and_box_is_a_volume(backend):
    b = backend(pool_size=1)
    assert run("print(input()[::-1])", "python", stdin="abc\n", backend=b).stdout == "cba\n"
    kw = b.client.created[0].kwargs
    assert kw["read_only"] and kw["network_mode"] == "none" and kw["cap_drop"] == ["ALL"]
    assert [m["Target"] for m in kw["mounts"]] == ["/box"] and "/box" not in kw["tmpfs"]


def test_archives_into_a_tmpfs_box_would_be_refused():
    """The fake's semantics: what the old container layout (tmpfs /box) ran into."""
    c = FakeContainer(FakeClient(), {"read_only": True, "tmpfs": {"/box": "rw"}, "mounts": []})
    with pytest.raises(APIError, match="tmpfs"):
        c.put_archive("/box", b"")
    with pytest.raises(APIError, match="read-only"):
        c.put_archive("/opt", b"")


def test_cpp_binary_comes_back_through_get_archive(backend):
    if shutil.which("g++") is None:
        pytest.skip("no g++")
    b = backend(pool_size=1)
    src = "#include <cstdio>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",a+b);}"
    ex = run(src, "cpp", stdin="2 40\n", backend=b)
    assert ex.verdict.name == "AC" and ex.stdout == "42\n", ex


def test_stderr_is_kept_out_of_the_supervisor_json():
    good = json.dumps({"exit_code": 0, "stdout": "x"}).encode()
    assert _parse(good, b"warning: noise")["exit_code"] == 0
    mixed = _parse(b"warning: noise" + good)  # what demux=False hands over
    assert "no result" in mixed["spawn_error"]


def test_program_files_are_removed_as_their_owner(backend):
    b = backend(pool_size=1)
    prog = "import os\nos.mkdir('d')\nopen('d/f', 'w').write('x')\nos.chmod('d', 0o500)\nprint('ok')"
    assert run(prog, "python", backend=b).stdout == "ok\n"
    container = b.client.created[0]
    assert os.listdir(container.root) == []  # the box is gone
    assert run("print(1)", "python", backend=b).stdout == "1\n"
    assert len(b.client.created) == 1  # and the container stayed in the pool


def test_pool_survives_failing_containers_without_deadlock(backend):
    """More concurrent runs than containers, and the first containers die: every run ends
    (SE for the dead ones), none waits forever for a container that was thrown away."""
    b = backend(pool_size=1, client=FakeClient(failing=3))
    results: list = []

    def one(i: int) -> None:
        results.append(run(f"print({i})", "python", backend=b))

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a run is stuck waiting for a container"
    verdicts = sorted(r.verdict.name for r in results)
    assert verdicts.count("SE") == 3 and verdicts.count("AC") == 3
    assert sum(not c.removed for c in b.client.created) == 1  # dead ones removed, one kept

"""The Docker backend: a warm pool of locked-down containers, programs run through exec.

A `docker run` per execution costs ~0.57 s (A.10), so containers live long (`sleep
infinity`) and are recycled after `recycle_after` runs or any failure. Each is created with
`network_mode="none"`, memory/pids/CPU limits, a read-only root, every capability dropped
except SETUID/SETGID and `no-new-privileges`. The in-container supervisor (`_supervise.py`,
baked into the image) runs the program as uid 65534, so the program can neither signal its
supervisor nor the container's init; it applies the rlimits and the wall-clock deadline inside
(exec has no timeout), with `timeout -s KILL` as a backstop.

What the engine allows, and so how files move:

* The archive API (`put_archive` / `get_archive`) writes through the daemon's view of the
  container's filesystem: it refuses a read-only root, and a tmpfs mounted inside the
  container is invisible to it. So `/box` is an anonymous **volume** (writable, exec allowed,
  removed with the container); `/tmp` stays a small tmpfs that only the program uses.
* `exec_run(demux=True)` keeps stdout (the supervisor's JSON) apart from stderr (Python's
  warnings, `timeout`'s messages), which would otherwise corrupt the JSON.
* Clean-up runs as uid 65534: root without CAP_DAC_OVERRIDE/CAP_FOWNER cannot remove what the
  program made read-only; 65534 owns those files, makes them writable and removes them. A box
  that survives is a container that is recycled.
* The pool is a condition variable over `pool_size` slots: a release, healthy or not, wakes a
  waiter, so more concurrent runs than containers (RUN_SLOTS > pool_size) queue, never hang.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import threading
import uuid
from typing import Any

from envgym.errors import SandboxUnavailable

from .. import toolchain
from .._supervise import _spawn_failure
from ..pool import default_workers
from .base import Backend, Spawn

DEFAULT_IMAGE = os.environ.get("ENVGYM_SANDBOX_IMAGE", "envgym-sandbox:latest")
BUILD_HINT = "docker build -t envgym-sandbox:latest <envgym>/sandbox  (the Dockerfile there)"
_SUPERVISOR = "/opt/envgym/supervise.py"
_NOBODY = 65534


class DockerBackend(Backend):
    name = "docker"
    isolated = True

    def __init__(self, image: str = DEFAULT_IMAGE, pool_size: int | None = None,
                 recycle_after: int = 500, memory_mb: int = 2048, client: Any = None) -> None:
        self.client = client or _client()
        _require_image(self.client, image)
        self.image, self.recycle_after, self.memory_mb = image, recycle_after, memory_mb
        self.pool_size = pool_size or default_workers()
        self._idle: list[Any] = []
        self._uses: dict[str, int] = {}
        self._starting = 0  # slots reserved by containers being created
        self._cond = threading.Condition()

    # -- the warm pool --------------------------------------------------------------------
    def _create(self) -> Any:
        from docker.types import Mount

        return self.client.containers.run(
            self.image, ["sleep", "infinity"], detach=True, init=True, auto_remove=True,
            network_mode="none", mem_limit=f"{self.memory_mb}m",
            memswap_limit=f"{self.memory_mb}m", pids_limit=256, nano_cpus=2_000_000_000,
            read_only=True, cap_drop=["ALL"], cap_add=["SETUID", "SETGID"],
            security_opt=["no-new-privileges"], labels={"envgym.sandbox": "1"},
            mounts=[Mount(target="/box", source=None, type="volume")],
            tmpfs={"/tmp": "rw,nosuid,size=64m,mode=1777"})

    def _acquire(self) -> Any:
        """An idle container, a new one if a slot is free, else wait for a release."""
        with self._cond:
            while not self._idle and len(self._uses) + self._starting >= self.pool_size:
                self._cond.wait()
            if self._idle:
                return self._idle.pop()
            self._starting += 1
        try:
            container = self._create()
        except BaseException:
            with self._cond:
                self._starting -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._starting -= 1
            self._uses[container.id] = 0
        return container

    def _release(self, container: Any, healthy: bool) -> None:
        with self._cond:
            self._uses[container.id] += 1
            keep = healthy and self._uses[container.id] < self.recycle_after
            if keep:
                self._idle.append(container)
            else:
                del self._uses[container.id]
            self._cond.notify()  # an idle container or a free slot: either lets a waiter on
        if not keep:
            _remove(container)

    def close(self) -> None:
        with self._cond:
            idle, self._idle = self._idle, []
            self._uses.clear()
            self._cond.notify_all()
        for container in idle:
            _remove(container)

    # -- one run --------------------------------------------------------------------------
    def _spawn(self, job: Spawn) -> dict[str, Any]:
        try:
            container = self._acquire()
        except Exception as exc:  # the engine cannot start a container: an SE for this run
            return _spawn_failure(f"docker: cannot create a container: {type(exc).__name__}: {exc}")
        box = f"/box/{uuid.uuid4().hex}"
        healthy = False
        try:
            if not container.put_archive("/box", _archive(job, box)):
                raise RuntimeError("put_archive into /box was refused")
            result = container.exec_run(
                ["timeout", "-s", "KILL", str(int(job.wall_s) + 10), "python3", _SUPERVISOR,
                 f"{box}/spec.json"], user="0", demux=True)
            stdout, stderr = result.output or (None, None)
            raw = _parse(stdout, stderr)
            if job.writable and raw.get("exit_code") == 0:
                _fetch_binary(container, box, job.run_dir)
            healthy = _clean(container, box) and raw.get("spawn_error") is None
            return raw
        except Exception as exc:  # docker.errors.* and transport failures: an SE, not a WA
            return _spawn_failure(f"docker: {type(exc).__name__}: {exc}")
        finally:
            self._release(container, healthy)


def _clean(container: Any, box: str) -> bool:
    """Kill what the run left and remove its box, as the uid that owns the program's files;
    False (recycle the container) when anything survives."""
    container.exec_run(["kill", "-KILL", "-1"], user=str(_NOBODY))
    container.exec_run(["sh", "-c", f"chmod -R u+rwX {box} 2>/dev/null; rm -rf {box}"],
                       user=str(_NOBODY))
    return container.exec_run(["test", "!", "-e", box], user=str(_NOBODY)).exit_code == 0


def _client() -> Any:
    try:
        import docker
    except ImportError as exc:
        raise SandboxUnavailable("the docker backend needs the docker SDK: "
                                 "`pip install 'envgym[docker]'`") from exc
    try:
        client = docker.from_env(timeout=10)
        client.ping()
    except Exception as exc:
        raise SandboxUnavailable(f"no Docker engine answers ({exc}); start dockerd or use "
                                 f"backend='bwrap' (`apt-get install bubblewrap`)") from exc
    return client


def _require_image(client: Any, image: str) -> None:
    try:
        client.images.get(image)
    except Exception as exc:
        raise SandboxUnavailable(f"the sandbox image {image!r} is missing; build it: "
                                 f"{BUILD_HINT}") from exc


def container_argv(argv: list[str]) -> list[str]:
    """Host interpreter/compiler paths mean nothing inside the image: use PATH names."""
    head = argv[0]
    if head == toolchain.python().executable:
        head = "python3"
    elif os.path.basename(head).endswith(("g++", "g++-12", "g++-13", "g++-14")) or "g++" in head:
        head = "g++"
    return [head, *argv[1:]]


def _archive(job: Spawn, box: str) -> bytes:
    """One tar with the program, the data files, stdin and the supervisor's spec."""
    name = os.path.basename(box)
    spec = {"argv": container_argv(job.argv), "cwd": box, "stdin_path": f"{box}/stdin",
            "env": toolchain.sandbox_env(box, "/tmp"), "rlimits": job.rlimits,
            "wall_s": job.wall_s, "stdout_cap": job.stdout_cap, "stderr_cap": job.stderr_cap,
            "user": _NOBODY, "group": _NOBODY}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        _add_dir(tar, name)
        sources = [(job.program.dir, f) for f in job.program.files] if job.program else []
        sources += [(job.run_dir, f) for f in sorted(os.listdir(job.run_dir))]
        for folder, fname in sources:
            with open(os.path.join(folder, fname), "rb") as fh:
                _add(tar, f"{name}/{fname}", fh.read(), 0o555 if fname == "a.out" else 0o444)
        _add(tar, f"{name}/stdin", job.stdin, 0o444)
        _add(tar, f"{name}/spec.json", json.dumps(spec).encode(), 0o444)
    return buf.getvalue()


def _add_dir(tar: tarfile.TarFile, name: str) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, 0o777, _NOBODY, _NOBODY
    tar.addfile(info)


def _add(tar: tarfile.TarFile, name: str, data: bytes, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    tar.addfile(info, io.BytesIO(data))


def _parse(stdout: bytes | None, stderr: bytes | None = None) -> dict[str, Any]:
    """The supervisor's JSON from stdout; its stderr only explains a missing result."""
    try:
        raw = json.loads(stdout or b"")
        if not isinstance(raw, dict):
            raise ValueError("not an object")
        raw.setdefault("spawn_error", None)
        return raw
    except ValueError:
        text = ((stdout or b"")[-300:] + b" | " + (stderr or b"")[-300:]).decode(
            "utf-8", errors="replace")
        return _spawn_failure(f"the in-container supervisor gave no result: {text!r}")


def _fetch_binary(container: Any, box: str, dest_dir: str) -> None:
    stream, _ = container.get_archive(f"{box}/{toolchain.BINARY_NAME}")
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        member = tar.getmembers()[0]
        if not member.isfile():  # never follow a link planted inside the container
            return
        data = tar.extractfile(member).read()
    with open(os.path.join(dest_dir, toolchain.BINARY_NAME), "wb") as fh:
        fh.write(data)


def _remove(container: Any) -> None:
    try:
        container.remove(force=True, v=True)  # v: its anonymous /box volume too
    except Exception:
        pass

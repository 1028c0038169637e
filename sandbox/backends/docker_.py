"""The Docker backend: a warm pool of locked-down containers, programs run through exec.

A `docker run` per execution costs ~0.57 s (A.10), so containers live long (`sleep
infinity`) and are recycled after `recycle_after` runs or any failure. Each is created with
`network_mode="none"`, memory/pids/CPU limits, a read-only root with tmpfs `/box` and `/tmp`,
every capability dropped except SETUID/SETGID and `no-new-privileges`. The in-container
supervisor (`_supervise.py`, baked into the image) runs the program as uid 65534, so the
program can neither signal its supervisor nor the container's init; it applies the rlimits and
the wall-clock deadline inside (exec has no timeout), with `timeout -s KILL` as a backstop.
"""

from __future__ import annotations

import io
import json
import os
import queue
import tarfile
import threading
import uuid
from typing import Any

from envgym.errors import SandboxUnavailable

from .. import toolchain
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
                 recycle_after: int = 500, memory_mb: int = 2048) -> None:
        self.client = _client()
        _require_image(self.client, image)
        self.image, self.recycle_after, self.memory_mb = image, recycle_after, memory_mb
        self.pool_size = pool_size or default_workers()
        self._idle: queue.Queue = queue.Queue()
        self._uses: dict[str, int] = {}
        self._lock = threading.Lock()

    # -- the warm pool --------------------------------------------------------------------
    def _create(self) -> Any:
        return self.client.containers.run(
            self.image, ["sleep", "infinity"], detach=True, init=True, auto_remove=True,
            network_mode="none", mem_limit=f"{self.memory_mb}m",
            memswap_limit=f"{self.memory_mb}m", pids_limit=256, nano_cpus=2_000_000_000,
            read_only=True, cap_drop=["ALL"], cap_add=["SETUID", "SETGID"],
            security_opt=["no-new-privileges"], labels={"envgym.sandbox": "1"},
            tmpfs={"/box": "rw,exec,nosuid,size=512m,mode=1777",
                   "/tmp": "rw,nosuid,size=64m,mode=1777"})

    def _acquire(self) -> Any:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if len(self._uses) < self.pool_size:
                container = self._create()
                self._uses[container.id] = 0
                return container
        return self._idle.get()

    def _release(self, container: Any, healthy: bool) -> None:
        with self._lock:
            self._uses[container.id] += 1
            if healthy and self._uses[container.id] < self.recycle_after:
                self._idle.put(container)
                return
            del self._uses[container.id]
        _remove(container)

    def close(self) -> None:
        while not self._idle.empty():
            _remove(self._idle.get_nowait())
        self._uses.clear()

    # -- one run --------------------------------------------------------------------------
    def _spawn(self, job: Spawn) -> dict[str, Any]:
        container = self._acquire()
        box = f"/box/{uuid.uuid4().hex}"
        healthy = False
        try:
            container.put_archive("/box", _archive(job, box))
            result = container.exec_run(
                ["timeout", "-s", "KILL", str(int(job.wall_s) + 10), "python3", _SUPERVISOR,
                 f"{box}/spec.json"], user="0", demux=False)
            raw = _parse(result.output)
            if job.writable and raw.get("exit_code") == 0:
                _fetch_binary(container, box, job.run_dir)
            container.exec_run(["kill", "-KILL", "-1"], user=str(_NOBODY))
            container.exec_run(["rm", "-rf", box], user="0")
            healthy = raw.get("spawn_error") is None
            return raw
        except Exception as exc:  # docker.errors.* and transport failures: an SE, not a WA
            return {"spawn_error": f"docker: {type(exc).__name__}: {exc}"}
        finally:
            self._release(container, healthy)


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


def _parse(output: bytes | None) -> dict[str, Any]:
    try:
        raw = json.loads(output or b"")
        raw.setdefault("spawn_error", None)
        return raw
    except ValueError:
        text = (output or b"")[-300:].decode("utf-8", errors="replace")
        return {"spawn_error": f"the in-container supervisor gave no result: {text!r}"}


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
        container.remove(force=True)
    except Exception:
        pass

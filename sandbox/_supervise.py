"""Run one process under rlimits with a wall-clock deadline and capped output.

This module imports nothing from envgym on purpose: the Docker image copies it in and runs
`python3 supervise.py SPEC.json` inside the container, so the same code enforces limits on
every backend. It is process hygiene (nanochat / SandboxFusion "none" mode), not isolation:
isolation comes from what `argv` wraps the program in (bubblewrap, a container).
"""

from __future__ import annotations

import json
import math
import os
import resource
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

# How long to keep draining pipes after the main process has exited: a daemon that inherited
# stdout must not hold the run open until the deadline.
_DRAIN_GRACE_S = 0.05


def rlimits_for(memory_mb: int | None, cpu_s: float | None, nproc: int | None,
                fsize_mb: int | None, nofile: int = 256) -> dict[str, int]:
    """The rlimit table used by every backend (names without the RLIMIT_ prefix)."""
    limits: dict[str, int] = {"CORE": 0, "NOFILE": nofile}
    if memory_mb:
        limits["AS"] = memory_mb << 20
    if cpu_s:
        limits["CPU"] = max(1, math.ceil(cpu_s))
    if nproc:
        limits["NPROC"] = nproc
    if fsize_mb:
        limits["FSIZE"] = fsize_mb << 20
    return limits


def _preexec(rlimits: dict[str, int]):
    """Build the child-side hook. CPU gets a soft limit (SIGXCPU) one second below the hard
    one (SIGKILL), so a program that ignores SIGXCPU still dies."""
    table = [(getattr(resource, "RLIMIT_" + k), v) for k, v in rlimits.items()]

    def apply() -> None:
        for res, value in table:
            hard = value + 1 if res == resource.RLIMIT_CPU else value
            resource.setrlimit(res, (value, hard))

    return apply


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pid: int, block: bool) -> tuple[int, Any] | None:
    got, status, usage = os.wait4(pid, 0 if block else os.WNOHANG)
    return (status, usage) if got else None


def supervise(argv: list[str], *, stdin: bytes = b"", cwd: str | None = None,
              env: dict[str, str] | None = None, rlimits: dict[str, int] | None = None,
              wall_s: float = 2.0, stdout_cap: int = 1 << 20, stderr_cap: int = 1 << 16,
              user: int | None = None, group: int | None = None,
              pass_fds: tuple[int, ...] = ()) -> dict[str, Any]:
    """Spawn `argv`, feed `stdin` from an anonymous file, read both pipes up to their caps,
    and SIGKILL the whole process group on the deadline or on a stdout flood. `pass_fds`
    stay open in the child (the bwrap backend's report pipe).

    Returns a plain dict (it crosses a JSON boundary in the Docker backend): exit_code, signal,
    timed_out, truncated, stdout, stderr, wall_time, cpu_time, memory_kb, spawn_error.
    """
    with tempfile.TemporaryFile() as stdin_file:
        stdin_file.write(stdin)
        stdin_file.seek(0)
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv, stdin=stdin_file, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=cwd, env=env if env is not None else {}, start_new_session=True,
                preexec_fn=_preexec(rlimits or {}), close_fds=True, pass_fds=pass_fds,
                user=user, group=group,
                extra_groups=[] if user is not None else None,
            )
        except OSError as exc:
            return _spawn_failure(f"{type(exc).__name__}: {exc}")
        return _watch(proc, start, wall_s, stdout_cap, stderr_cap)


def _spawn_failure(message: str) -> dict[str, Any]:
    return {"exit_code": None, "signal": None, "timed_out": False, "truncated": False,
            "stdout": "", "stderr": "", "wall_time": 0.0, "cpu_time": 0.0, "memory_kb": 0,
            "spawn_error": message}


def _watch(proc: subprocess.Popen, start: float, wall_s: float, stdout_cap: int,
           stderr_cap: int) -> dict[str, Any]:
    """The read loop: one thread, one selector, a hard deadline."""
    deadline = start + wall_s
    bufs = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    caps = {proc.stdout.fileno(): stdout_cap, proc.stderr.fileno(): stderr_cap}
    sel = selectors.DefaultSelector()
    for fd in bufs:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    timed_out = truncated = False
    reaped = None
    drain_until = None
    while sel.get_map():
        now = time.monotonic()
        if now >= deadline and reaped is None:
            timed_out = True
            break
        if drain_until is not None and now >= drain_until:
            break
        limit = min(deadline, drain_until or deadline) - now
        for key, _ in sel.select(timeout=min(max(limit, 0.0), 0.05)):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fd)
                continue
            room = caps[key.fd] - len(bufs[key.fd])
            bufs[key.fd] += chunk[:max(room, 0)]
            if room < len(chunk) and key.fd == proc.stdout.fileno():
                truncated = True
        if truncated:
            break
        if reaped is None:
            reaped = _reap(proc.pid, block=False)
            if reaped is not None:
                drain_until = time.monotonic() + _DRAIN_GRACE_S
    sel.close()
    _kill_group(proc.pid)
    if reaped is None:
        reaped = _reap(proc.pid, block=True)
    wall = time.monotonic() - start
    out = bytes(bufs[proc.stdout.fileno()])
    err = bytes(bufs[proc.stderr.fileno()])
    proc.stdout.close()
    proc.stderr.close()
    proc.returncode = 0  # reaped by wait4 above; stop Popen from waiting again
    return _result(reaped, wall, timed_out, truncated, out, err)


def _result(reaped: tuple[int, Any], wall: float, timed_out: bool, truncated: bool,
            out: bytes, err: bytes) -> dict[str, Any]:
    status, usage = reaped
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    return {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": sig,
        "timed_out": timed_out,
        "truncated": truncated,
        "stdout": out.decode("utf-8", errors="replace"),
        "stderr": err.decode("utf-8", errors="replace"),
        "wall_time": round(wall, 6),
        "cpu_time": round(usage.ru_utime + usage.ru_stime, 6),
        "memory_kb": int(usage.ru_maxrss),
        "spawn_error": None,
    }


def main(spec_path: str) -> None:
    """Entry point inside a container: read a JSON spec, print one JSON result."""
    with open(spec_path) as fh:
        spec = json.load(fh)
    with open(spec.pop("stdin_path"), "rb") as fh:
        stdin = fh.read()
    result = supervise(spec.pop("argv"), stdin=stdin, **spec)
    sys.stdout.write(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1])

"""Lease a dedicated host uid per run when envgym runs as root.

Why: the kernel ignores RLIMIT_NPROC for processes whose real uid is 0, so a fork bomb run as
root is unbounded, even inside a user namespace. Running each sandbox as its own unprivileged
uid makes RLIMIT_NPROC bite, keeps concurrent runs from signalling each other, and lets the
subprocess backend kill every leftover process of the run with one `kill(-1)` as that uid.
Leases are `flock`s on files, so several envgym processes on one machine never share a uid.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import signal
import tempfile
import time
from collections.abc import Iterator

UID_BASE = 61000
UID_COUNT = 1000
_LOCK_DIR = os.path.join(tempfile.gettempdir(), "envgym-sandbox-uids")


def can_switch_uid() -> bool:
    return os.geteuid() == 0


@contextlib.contextmanager
def lease_uid() -> Iterator[int | None]:
    """Yield a free uid (or None when not root, where we cannot switch anyway)."""
    if not can_switch_uid():
        yield None
        return
    os.makedirs(_LOCK_DIR, mode=0o700, exist_ok=True)
    start = random.randrange(UID_COUNT)
    for i in range(UID_COUNT):
        uid = UID_BASE + (start + i) % UID_COUNT
        fd = os.open(os.path.join(_LOCK_DIR, str(uid)), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            yield uid
        finally:
            os.close(fd)
        return
    raise RuntimeError(f"all {UID_COUNT} sandbox uids are leased")


def kill_all_of(uid: int) -> None:
    """SIGKILL every process owned by `uid` (kill(-1) from a child that became `uid`).

    os.fork + setuid + kill + _exit touch no Python locks, so this is safe from threads."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def live_processes_of(uid: int) -> list[int]:
    """Pids owned by `uid` that are not zombies (a zombie holds no resources; reaping it is
    its parent's job, and bwrap's namespace init is reparented to the host's init)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            pids.append(int(entry))
    return pids


def clear_uid(uid: int, timeout_s: float = 10.0) -> bool:
    """Kill everything `uid` still runs and wait until it is gone; True when clean.

    Called before a lease is released, so no later run inherits a leftover of this one."""
    deadline = time.monotonic() + timeout_s
    while live_processes_of(uid):
        if time.monotonic() > deadline:
            return False
        kill_all_of(uid)
        time.sleep(0.005)
    return True

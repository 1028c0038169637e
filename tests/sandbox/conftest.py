"""Shared fixtures: which backends can run here, and a 'host unchanged' guard."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from envgym.errors import SandboxUnavailable
from envgym.sandbox import Limits, get_backend
from envgym.sandbox.uids import UID_BASE, UID_COUNT, live_processes_of

UIDS = set(range(UID_BASE, UID_BASE + UID_COUNT))

FAST = Limits(time_s=1.0, memory_mb=256)


def bwrap_or_skip():
    try:
        return get_backend("bwrap")
    except SandboxUnavailable as exc:  # CI installs bubblewrap; a laptop may not have it
        pytest.skip(f"bwrap unavailable: {exc}")


@pytest.fixture(scope="session")
def bwrap():
    return bwrap_or_skip()


@pytest.fixture(scope="session")
def plain():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return get_backend("subprocess")


@pytest.fixture(params=["bwrap", "subprocess"])
def backend(request, bwrap, plain):
    return bwrap if request.param == "bwrap" else plain


@pytest.fixture(scope="session", autouse=True)
def private_tempdir():
    """Host-side work dirs of this session go to a private temp dir, so that other processes
    on a shared machine using the sandbox at the same time never look like our leftovers.
    (The uid lock dir was fixed at import: leases stay shared with them, as they must.)"""
    folder = tempfile.mkdtemp(prefix="envgym-sandbox-tests-")
    os.chmod(folder, 0o711)  # the leased uids must traverse it, as they do /tmp
    saved, tempfile.tempdir = tempfile.tempdir, folder
    yield folder
    tempfile.tempdir = saved
    shutil.rmtree(folder, ignore_errors=True)


def _uid_and_parent(pid: int) -> tuple[int, int] | None:
    try:
        uid = os.stat(f"/proc/{pid}").st_uid
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return uid, int(fh.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _ours_or_orphaned(pid: int) -> bool:
    """Follow parents through sandbox-uid processes: a run of ours hangs under this test
    process, a leaked daemon under init; another process's sandbox run under that process."""
    seen = set()
    while pid not in seen:
        seen.add(pid)
        info = _uid_and_parent(pid)
        if info is None:
            return False
        uid, parent = info
        if uid not in UIDS:
            return pid in (os.getpid(), 1)
        pid = parent
    return False


def sandbox_processes() -> set[int]:
    """Live host pids owned by the leased sandbox uids that this test process started or
    that outlived their run (there must be none between runs)."""
    uids = set()
    for entry in os.listdir("/proc"):
        try:
            uids.add(os.stat(f"/proc/{entry}").st_uid)
        except OSError:
            continue
    return {pid for uid in uids & UIDS for pid in live_processes_of(uid)
            if _ours_or_orphaned(pid)}


def leftover_dirs() -> set[str]:
    tmp = tempfile.gettempdir()
    return {d for d in os.listdir(tmp) if d.startswith(("envgym-sbx-", "envgym-run-"))}


@pytest.fixture
def host_unchanged():
    """Assert that a test leaves no sandbox process and no work dir behind."""
    dirs_before = leftover_dirs()
    yield
    assert sandbox_processes() == set()
    assert leftover_dirs() - dirs_before == set()

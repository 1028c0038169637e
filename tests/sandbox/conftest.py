"""Shared fixtures: which backends can run here, and a 'host unchanged' guard."""

from __future__ import annotations

import os
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


def sandbox_processes() -> set[int]:
    """Live host pids owned by the leased sandbox uids (there must be none between runs)."""
    uids = set()
    for entry in os.listdir("/proc"):
        try:
            uids.add(os.stat(f"/proc/{entry}").st_uid)
        except OSError:
            continue
    return {pid for uid in uids & UIDS for pid in live_processes_of(uid)}


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

"""The process-wide resource cache: one build per key even when many threads start at once."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from envgym import resources
from envgym.resources import build_counts, file_key, shared


@pytest.fixture(autouse=True)
def _fresh():
    resources.clear("test")
    yield
    resources.clear("test")


def _start_together(n: int, fn):
    """Run `fn` on `n` threads released by one barrier, so they all miss the cache together."""
    barrier = threading.Barrier(n)

    def run(_):
        barrier.wait()
        return fn()

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


def test_concurrent_first_use_builds_once():
    calls = []

    def build():
        calls.append(1)
        time.sleep(0.05)  # long enough that every thread arrives during the build
        return object()

    values = _start_together(32, lambda: shared(("test", "slow"), build))
    assert len(calls) == 1
    assert all(v is values[0] for v in values)
    assert build_counts()[("test", "slow")] == 1


def test_keys_are_independent_and_build_in_parallel():
    started = threading.Barrier(2, timeout=5)

    def build(name):
        started.wait()  # deadlocks (BrokenBarrierError) if two keys were built one at a time
        return name

    with ThreadPoolExecutor(2) as pool:
        a = pool.submit(shared, ("test", "a"), lambda: build("a"))
        b = pool.submit(shared, ("test", "b"), lambda: build("b"))
        assert (a.result(10), b.result(10)) == ("a", "b")


def test_failed_build_is_not_cached_and_retries():
    attempts = []

    def build():
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("disk hiccup")
        return "ok"

    with pytest.raises(OSError, match="disk hiccup"):
        shared(("test", "flaky"), build)
    assert shared(("test", "flaky"), build) == "ok"
    assert shared(("test", "flaky"), build) == "ok"
    assert len(attempts) == 2


def test_recursive_build_is_refused_not_deadlocked():
    def build():
        return shared(("test", "self"), build)

    with pytest.raises(RuntimeError, match="recursive"):
        shared(("test", "self"), build)


def test_file_key_changes_with_the_file(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("a\n")
    before = file_key(path)
    assert file_key(str(path)) == before
    path.write_text("a longer file\n")
    assert file_key(path) != before
    assert file_key(None) is None
    assert file_key(tmp_path / "missing")[1:] == (None, None)


def test_clear_by_family_or_key_prefix():
    shared(("test", "a", 1), lambda: 1)
    shared(("test", "b", 1), lambda: 2)
    resources.clear(("test", "a"))
    assert ("test", "a", 1) not in build_counts() and ("test", "b", 1) in build_counts()
    assert shared(("test", "a", 1), lambda: 3) == 3  # rebuilt after clear


def test_forked_child_reuses_built_values_and_can_build_new_ones():
    import os

    parent_value = shared(("test", "forked"), lambda: ["built in the parent"])
    pid = os.fork()
    if pid == 0:  # child: no rebuild of what exists, and a fresh key builds (no stale lock)
        ok = (shared(("test", "forked"), lambda: ["rebuilt"]) is parent_value
              and shared(("test", "child"), lambda: "new") == "new")
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0

"""One process-wide cache for heavy read-only state: built once per key, under a lock.

The rollout engine makes one environment per episode, and at the default concurrency 64
episodes are made at the same moment on 64 threads. Encoders, indexes, generated worlds,
problem sets and reasoning banks are read-only after they are built, so every instance (and
every `fork()`) can share one copy. A plain dict or `functools.lru_cache` is not enough: all
64 threads miss together and each builds its own copy, which costs 64x the time and memory
(the "first-eval stampede"). `shared(key, build)` runs `build` at most once per key; the
other threads wait on that key's lock and get the same object. Different keys build in
parallel. A failed build is not cached: the error goes to the caller that built, and the
next caller tries again.

Keys are tuples that start with the environment family, e.g.
`("search", "bm25", corpus_key)`. `file_key(path)` turns a user's file into a key that
changes when the file does. Values must be treated as read-only by their users.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["build_counts", "clear", "file_key", "shared"]

T = TypeVar("T")
_MISSING = object()


class _Entry:
    __slots__ = ("lock", "value", "builder")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.value: Any = _MISSING
        self.builder: int | None = None  # thread id while building, to refuse recursion


_LOCK = threading.Lock()  # guards _ENTRIES and _BUILDS, never held during a build
_ENTRIES: dict[Hashable, _Entry] = {}
_BUILDS: Counter = Counter()


def shared(key: Hashable, build: Callable[[], T]) -> T:
    """The value cached under `key`, built by `build()` on first use (once, under a lock)."""
    entry = _ENTRIES.get(key)
    if entry is not None and entry.value is not _MISSING:
        return entry.value  # fast path: no lock once built
    with _LOCK:
        entry = _ENTRIES.setdefault(key, _Entry())
    if entry.builder == threading.get_ident():
        raise RuntimeError(f"shared resource {key!r} needs itself to build (recursive build).")
    with entry.lock:
        if entry.value is _MISSING:
            entry.builder = threading.get_ident()
            try:
                value = build()
            finally:
                entry.builder = None
            entry.value = value
            with _LOCK:
                _BUILDS[key] += 1
    return entry.value


def file_key(path: str | Path | None) -> tuple | None:
    """(resolved path, size, mtime) of a file or directory, or None for None.

    Part of a cache key for state loaded from a user's file, so an edited file is reloaded
    rather than served stale. A missing path keys as itself (the loader then raises)."""
    if path is None:
        return None
    p = Path(path).expanduser()
    try:
        st = p.stat()
    except OSError:
        return (str(p), None, None)
    return (str(p.resolve()), st.st_size, st.st_mtime_ns)


def build_counts() -> dict[Hashable, int]:
    """How many times each key was built in this process (1 each, unless `clear`ed)."""
    with _LOCK:
        return dict(_BUILDS)


def clear(prefix: str | tuple | None = None) -> None:
    """Forget cached values: all, those of a family (`"search"`), or those whose key starts
    with a tuple (`("psych", "state")`). For tests and for freeing memory between unrelated
    runs; objects already handed out stay valid."""
    with _LOCK:
        for key in [k for k in _ENTRIES if prefix is None or _starts(k, prefix)]:
            del _ENTRIES[key]
            _BUILDS.pop(key, None)


def _starts(key: Hashable, prefix: str | tuple) -> bool:
    if not isinstance(key, tuple):
        return key == prefix
    if isinstance(prefix, tuple):
        return key[:len(prefix)] == prefix
    return bool(key) and key[0] == prefix


def _after_fork_in_child() -> None:
    """A lock held by a thread of the parent would stay held forever in a forked child:
    give unbuilt entries fresh locks (built values carry over copy-on-write)."""
    global _LOCK
    _LOCK = threading.Lock()
    for key, entry in list(_ENTRIES.items()):
        if entry.value is _MISSING:
            _ENTRIES[key] = _Entry()
        else:
            entry.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

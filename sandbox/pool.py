"""A bounded worker pool with back-pressure for judging many programs.

`imap` never holds more than `max_pending` submissions in flight, so a generator of a million
programs is consumed as workers free up instead of being materialised up front; results come
back in input order. Each worker thread blocks inside a sandbox, so threads (not processes)
are enough: the work happens in the sandboxed children.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from envgym.errors import InvalidConfig

T = TypeVar("T")
R = TypeVar("R")


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def imap(fn: Callable[[T], R], items: Iterable[T], workers: int | None = None,
         max_pending: int | None = None) -> Iterator[R]:
    """Apply `fn` to `items` on `workers` threads, yielding results in order.

    At most `max_pending` (default 2 x workers) items are submitted but not yet yielded;
    pulling the next input waits for the oldest result, which is the back-pressure."""
    workers = workers or default_workers()
    max_pending = max_pending or 2 * workers
    if workers < 1 or max_pending < workers:
        raise InvalidConfig(f"need workers >= 1 and max_pending >= workers, got "
                            f"{workers}, {max_pending}")
    pending: deque[Future[R]] = deque()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="envgym-judge") as pool:
        for item in items:
            if len(pending) >= max_pending:
                yield pending.popleft().result()
            pending.append(pool.submit(fn, item))
        while pending:
            yield pending.popleft().result()


class InFlight:
    """A counter of running jobs, so tests and the benchmark can observe the bound."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def __enter__(self) -> InFlight:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.now -= 1

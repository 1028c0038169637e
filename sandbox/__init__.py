"""envgym.sandbox: run untrusted programs and judge them like a competitive-programming judge.

    from envgym.sandbox import run, judge, Limits
    run("print(input()[::-1])", "python", stdin="abc").stdout        # 'cba\\n'
    judge(src, "cpp", [{"input": "1 2", "output": "3"}]).verdict       # Verdict.AC

Backends: "bwrap" (default where its probe passes), "docker" (opt-in, warm pool) and
"subprocess" (NOT a security boundary; warns when chosen). "auto" = bwrap, else an error that
says how to get isolation (the subprocess fallback needs ENVGYM_ALLOW_UNSAFE_SANDBOX=1).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .backends import BACKENDS, Backend, available_backends, get_backend, reset_backends
from .compare import FloatTolerance, compare
from .judge import Checker, CheckerProgram, judge
from .pool import imap
from .types import Execution, Judgement, Limits, TestCase, TestResult, Verdict

__all__ = [
    "BACKENDS",
    "Backend",
    "CheckerProgram",
    "Execution",
    "FloatTolerance",
    "Judgement",
    "Limits",
    "Submission",
    "TestCase",
    "TestResult",
    "Verdict",
    "available_backends",
    "compare",
    "get_backend",
    "iter_judge_many",
    "judge",
    "judge_many",
    "reset_backends",
    "run",
]


def run(source: str, language: str, stdin: str = "", limits: Limits | None = None,
        backend: str | Backend = "auto") -> Execution:
    """Build (compile if needed) and run `source` once on `stdin`.

    The verdict is AC when it exited 0 within every limit, CE when it does not compile,
    TLE/MLE/OLE/RE when a limit or a crash stopped it, SE when the sandbox itself failed."""
    be = get_backend(backend)
    limits = limits or Limits()
    built = be.build(source, language, limits)
    if isinstance(built, Execution):
        return built
    try:
        return be.execute(built, stdin, limits)
    finally:
        built.cleanup()


@dataclass(frozen=True)
class Submission:
    """One item for `judge_many`; None fields fall back to judge_many's arguments."""

    source: str
    language: str
    tests: tuple[Any, ...] | list[Any]
    limits: Limits | None = None
    checker: Checker = None
    float_tol: Any = None

    @classmethod
    def coerce(cls, value: Submission | Mapping[str, Any]) -> Submission:
        return value if isinstance(value, Submission) else cls(**value)


def iter_judge_many(submissions: Iterable[Submission | Mapping[str, Any]], *,
                    workers: int | None = None, limits: Limits | None = None,
                    backend: str | Backend = "auto", stop_on_first_failure: bool = False,
                    max_pending: int | None = None) -> Iterator[Judgement]:
    """Judge submissions on a bounded pool, yielding in input order with back-pressure."""
    be = get_backend(backend)

    def one(item: Submission | Mapping[str, Any]) -> Judgement:
        sub = Submission.coerce(item)
        return judge(sub.source, sub.language, sub.tests, sub.limits or limits, sub.checker,
                     be, stop_on_first_failure, sub.float_tol)

    yield from imap(one, submissions, workers, max_pending)


def judge_many(submissions: Iterable[Submission | Mapping[str, Any]], *,
               workers: int | None = None, limits: Limits | None = None,
               backend: str | Backend = "auto", stop_on_first_failure: bool = False,
               max_pending: int | None = None) -> list[Judgement]:
    """`iter_judge_many` collected into a list (at most `workers` sandboxes at once)."""
    return list(iter_judge_many(submissions, workers=workers, limits=limits, backend=backend,
                                stop_on_first_failure=stop_on_first_failure,
                                max_pending=max_pending))

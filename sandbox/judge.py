"""Judge a submission against stdin/stdout tests, and many submissions in parallel.

The program is built once (C++ compiled once per judgement), each test runs in a fresh
sandbox, and outputs are compared here on the host. A special judge is either a Python
callable `(input, expected, actual) -> bool | (bool, str)`, trusted and run on the host, or a
`CheckerProgram` run in its own sandbox with testlib's argument order
`checker input.txt output.txt answer.txt` (exit 0 = accepted).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from envgym.errors import InvalidConfig

from .backends import Backend, Program, get_backend
from .compare import FloatTolerance, compare
from .types import Execution, Judgement, Limits, TestCase, TestResult, Verdict

CheckerFn = Callable[[str, str, str], Union[bool, tuple[bool, str]]]


@dataclass(frozen=True)
class CheckerProgram:
    """A special-judge program (trusted, but still sandboxed) with its own limits."""

    source: str
    language: str = "cpp"
    limits: Limits = field(default_factory=lambda: Limits(time_s=10.0))


Checker = Union[CheckerFn, CheckerProgram, None]


def judge(source: str, language: str, tests: Iterable[Any], limits: Limits | None = None,
          checker: Checker = None, backend: str | Backend = "auto",
          stop_on_first_failure: bool = False,
          float_tol: float | tuple[float, float] | FloatTolerance | None = None) -> Judgement:
    """Run every test and return per-test verdicts plus the overall one (the first failing
    test's, SE if any test hit an infrastructure failure, AC when all pass)."""
    be = get_backend(backend)
    limits = limits or Limits()
    cases = [TestCase.coerce(t) for t in tests]
    start = time.monotonic()
    built = be.build(source, language, limits)
    if isinstance(built, Execution):
        return Judgement(built.verdict, 0, len(cases), [], built.wall_time, be.name,
                         built.stderr, built.message)
    try:
        with _CheckerSession(be, checker) as spj:
            results = _run_tests(be, built, cases, limits, spj, float_tol,
                                 stop_on_first_failure)
    finally:
        built.cleanup()
    return _summarise(results, len(cases), time.monotonic() - start, be.name, built)


def _run_tests(be: Backend, program: Program, cases: Sequence[TestCase], limits: Limits,
               spj: _CheckerSession, float_tol: Any, stop: bool) -> list[TestResult]:
    results: list[TestResult] = []
    for index, case in enumerate(cases):
        ex = be.execute(program, case.input, limits)
        verdict, message = ex.verdict, ex.message
        if verdict is Verdict.AC:
            verdict, message = spj.check(case, ex.stdout, float_tol)
        results.append(TestResult(index, verdict, ex.wall_time, ex.cpu_time, ex.memory_kb,
                                  message, ex.stdout[:200]))
        if verdict is Verdict.CE or (stop and verdict is not Verdict.AC):
            break
    return results


def _summarise(results: list[TestResult], total: int, wall: float, backend: str,
               program: Program) -> Judgement:
    passed = sum(r.verdict is Verdict.AC for r in results)
    failures = [r for r in results if r.verdict is not Verdict.AC]
    if any(r.verdict is Verdict.SE for r in failures):
        verdict, message = Verdict.SE, "infrastructure failure: retry, do not score"
    elif failures:
        verdict, message = failures[0].verdict, f"test {failures[0].index}: {failures[0].message}"
    else:
        verdict, message = Verdict.AC, ""
    return Judgement(verdict, passed, total, results, round(wall, 6), backend,
                     program.compile_output, message)


class _CheckerSession:
    """Holds a compiled checker program for the length of one judgement."""

    def __init__(self, backend: Backend, checker: Checker) -> None:
        self.backend, self.checker = backend, checker
        self.program: Program | None = None

    def __enter__(self) -> _CheckerSession:
        if isinstance(self.checker, CheckerProgram):
            built = self.backend.build(self.checker.source, self.checker.language,
                                       self.checker.limits)
            if isinstance(built, Execution):
                raise InvalidConfig(f"the checker program does not build: {built.stderr[:500]}")
            self.program = built
        return self

    def __exit__(self, *exc: object) -> None:
        if self.program is not None:
            self.program.cleanup()

    def check(self, case: TestCase, actual: str, float_tol: Any) -> tuple[Verdict, str]:
        if self.checker is None:
            ok, why = compare(case.output, actual, float_tol)
            return (Verdict.AC, "") if ok else (Verdict.WA, why)
        if self.program is None:
            return _call_checker(self.checker, case, actual)  # type: ignore[arg-type]
        return self._run_program(case, actual)

    def _run_program(self, case: TestCase, actual: str) -> tuple[Verdict, str]:
        assert isinstance(self.checker, CheckerProgram) and self.program is not None
        data = {"input.txt": case.input.encode(), "output.txt": actual.encode(),
                "answer.txt": case.output.encode()}
        ex = self.backend.execute(self.program, b"", self.checker.limits, data=data,
                                  args=["input.txt", "output.txt", "answer.txt"])
        if ex.verdict is Verdict.AC:
            return Verdict.AC, ""
        if ex.exit_code is not None and ex.exit_code == 1:
            return Verdict.WA, (ex.stdout + ex.stderr).strip()[:200] or "rejected by checker"
        return Verdict.SE, f"checker failed: {ex.verdict.value} {ex.message}"


def _call_checker(fn: CheckerFn, case: TestCase, actual: str) -> tuple[Verdict, str]:
    try:
        answer = fn(case.input, case.output, actual)
    except Exception as exc:  # a broken checker is our failure, not the contestant's
        return Verdict.SE, f"checker raised {type(exc).__name__}: {exc}"
    ok, why = answer if isinstance(answer, tuple) else (bool(answer), "")
    return (Verdict.AC, "") if ok else (Verdict.WA, why or "rejected by checker")

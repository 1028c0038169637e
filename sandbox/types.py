"""The sandbox's value types: limits in, executions and judgements out.

Plain frozen dataclasses rather than pydantic models: these cross thread boundaries thousands
of times per training step, and `to_dict()` is all the CLI and the logs need.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Execution", "Judgement", "Limits", "TestCase", "TestResult", "Verdict"]


class Verdict(str, enum.Enum):
    """Named verdicts (peers use opaque integers such as verl's -1..-4).

    `SEVERITY` gives the order used when one run matches several: SE > CE > TLE > MLE > OLE >
    RE > WA > AC. SE is an infrastructure failure and must never be scored as a wrong answer.
    """

    AC = "AC"
    WA = "WA"
    TLE = "TLE"
    MLE = "MLE"
    RE = "RE"
    CE = "CE"
    OLE = "OLE"
    SE = "SE"

    @property
    def severity(self) -> int:
        return _SEVERITY.index(self)


_SEVERITY = [Verdict.AC, Verdict.WA, Verdict.RE, Verdict.OLE, Verdict.MLE, Verdict.TLE,
             Verdict.CE, Verdict.SE]


@dataclass(frozen=True)
class Limits:
    """Per-run resource limits; the defaults suit competitive programming on a laptop.

    `time_s` is the wall-clock limit that decides TLE; `cpu_time_s` (default: `time_s`) becomes
    RLIMIT_CPU. Output beyond `output_kb` is cut and the run killed (OLE); `file_size_mb` caps
    any file the program writes (RLIMIT_FSIZE) and `tmp_mb` the size of its private tmpfs.
    """

    time_s: float = 2.0
    cpu_time_s: float | None = None
    memory_mb: int = 512
    max_processes: int = 64
    output_kb: int = 1024
    stderr_kb: int = 64
    file_size_mb: int = 16
    tmp_mb: int = 64
    compile_time_s: float = 30.0
    compile_memory_mb: int = 2048

    def __post_init__(self) -> None:
        from envgym.errors import InvalidConfig

        for name in ("time_s", "memory_mb", "max_processes", "output_kb", "file_size_mb",
                     "tmp_mb", "compile_time_s", "compile_memory_mb"):
            if getattr(self, name) <= 0:
                raise InvalidConfig(f"Limits.{name} must be positive, got {getattr(self, name)}")

    @property
    def cpu_limit_s(self) -> float:
        return self.cpu_time_s if self.cpu_time_s is not None else self.time_s

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Execution:
    """One run of a program: what it printed, how it ended, and what it cost.

    `verdict` is AC for a run that exited 0 within every limit (there is no expected output
    here; `judge` turns AC into WA when the output is wrong). `exit_code` is None when the
    program died by `signal`. `memory_kb` is the peak resident set size.
    """

    verdict: Verdict
    stdout: str
    stderr: str
    exit_code: int | None
    signal: int | None
    wall_time: float
    cpu_time: float
    memory_kb: int
    truncated: bool
    backend: str
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["verdict"] = self.verdict.value
        return out


@dataclass(frozen=True)
class TestCase:
    """One stdin/expected-stdout pair. The expected output stays on the host."""

    input: str
    output: str

    @classmethod
    def coerce(cls, value: TestCase | dict[str, Any] | tuple[str, str]) -> TestCase:
        """Accept the shapes datasets use: {"input","output"}, LiveCodeBench's field names,
        or a plain (input, output) pair."""
        if isinstance(value, TestCase):
            return value
        if isinstance(value, dict):
            inp = value.get("input", value.get("stdin", ""))
            out = value.get("output", value.get("expected_output", value.get("stdout")))
            if out is None:
                from envgym.errors import InvalidConfig

                raise InvalidConfig(f"test case has no 'output' field: keys {sorted(value)}")
            return cls(str(inp), str(out))
        inp, out = value
        return cls(str(inp), str(out))


@dataclass(frozen=True)
class TestResult:
    """The verdict of one test; `message` says why a checker rejected the output."""

    index: int
    verdict: Verdict
    wall_time: float
    cpu_time: float
    memory_kb: int
    message: str = ""
    stdout_head: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["verdict"] = self.verdict.value
        return out


@dataclass(frozen=True)
class Judgement:
    """A whole submission: the overall verdict is the first failing test's (AC if none)."""

    verdict: Verdict
    passed: int
    total: int
    tests: list[TestResult] = field(default_factory=list)
    wall_time: float = 0.0
    backend: str = ""
    compile_output: str = ""
    message: str = ""

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.AC

    @property
    def fraction_passed(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["verdict"] = self.verdict.value
        out["tests"] = [t.to_dict() for t in self.tests]
        return out

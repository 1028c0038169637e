"""What every backend shares: building a program once, running it under limits, verdicts.

A backend only has to say how to spawn one command with some files visible (`_spawn`); the
host-side bookkeeping lives here so that isolation code stays short and easy to audit:
host directories are root-owned and `0711`, files handed to a run are read-only, and a
leased per-run uid (when root) owns the only writable directory.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from .. import toolchain
from .._supervise import rlimits_for
from ..types import Execution, Limits, Verdict
from ..uids import lease_uid
from ..verdicts import classify

_PY_COMPILE_ERROR = re.compile(r"^(SyntaxError|IndentationError|TabError)\b", re.M)
_MAX_CONCURRENT = int(os.environ.get("ENVGYM_SANDBOX_MAX_CONCURRENCY",
                                     max(4, 2 * (os.cpu_count() or 1))))
# One process-wide bound on simultaneous sandboxed runs, whoever asks (verl's token bucket).
RUN_SLOTS = threading.BoundedSemaphore(_MAX_CONCURRENT)


@dataclass
class Program:
    """A program ready to run: its files in a root-owned host dir, and its command line."""

    language: str
    dir: str
    files: tuple[str, ...]
    argv: list[str]
    compile_output: str = ""
    _closed: bool = field(default=False, repr=False)

    def cleanup(self) -> None:
        if not self._closed:
            shutil.rmtree(self.dir, ignore_errors=True)
            self._closed = True


@dataclass(frozen=True)
class Spawn:
    """One command for `_spawn`: what to run, what it sees, and its budget."""

    argv: list[str]
    run_dir: str  # host dir: data files to show the run, or the writable dir when compiling
    program: Program | None
    writable: bool
    stdin: bytes
    wall_s: float
    rlimits: dict[str, int]
    stdout_cap: int
    stderr_cap: int
    uid: int | None
    tmp_mb: int = 64


class Backend(ABC):
    """Base class of the three backends; `isolated` says whether it is a security boundary."""

    name: str = "base"
    isolated: bool = False

    @abstractmethod
    def _spawn(self, job: Spawn) -> dict[str, Any]:
        """Run `job.argv` in the backend's environment; return `_supervise.supervise`'s dict."""

    def close(self) -> None:
        """Release long-lived resources (containers); a no-op for most backends."""

    def _uid_for_spawn(self, uid: int | None) -> int | None:
        """The uid a run's host-side files must belong to (None: leave ownership alone)."""
        return uid

    # -- building -------------------------------------------------------------------------
    def build(self, source: str, language: str, limits: Limits) -> Program | Execution:
        """Write the source and, for C++, compile it once; a failure comes back as an
        `Execution` with verdict CE (or SE when the compiler could not even start)."""
        lang = toolchain.normalise_language(language)
        host_dir = tempfile.mkdtemp(prefix="envgym-sbx-")
        os.chmod(host_dir, 0o711)
        src = os.path.join(host_dir, toolchain.SOURCE_NAME[lang])
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(source)
        os.chmod(src, 0o444)
        if lang == "python":
            return Program(lang, host_dir, (toolchain.SOURCE_NAME[lang],),
                           toolchain.run_argv(lang))
        return self._compile_cpp(host_dir, limits)

    def _compile_cpp(self, host_dir: str, limits: Limits) -> Program | Execution:
        argv = toolchain.compile_argv()
        with RUN_SLOTS, lease_uid() as uid:
            owner = self._uid_for_spawn(uid)
            if owner is not None:
                os.chown(host_dir, owner, owner)
            os.chmod(host_dir, 0o700)
            job = Spawn(argv, host_dir, None, True, b"", limits.compile_time_s,
                        rlimits_for(limits.compile_memory_mb, limits.compile_time_s,
                                    limits.max_processes, 256), 1 << 16, 1 << 16, uid,
                        limits.tmp_mb)
            try:
                raw = self._spawn(job)
            finally:
                self._after_run(uid)
        os.chown(host_dir, os.geteuid(), os.getegid())
        os.chmod(host_dir, 0o711)
        binary = os.path.join(host_dir, toolchain.BINARY_NAME)
        if raw.get("spawn_error"):
            shutil.rmtree(host_dir, ignore_errors=True)
            return self._execution(raw, Verdict.SE, raw["spawn_error"])
        if raw["timed_out"] or raw["exit_code"] != 0 or not _is_regular(binary):
            shutil.rmtree(host_dir, ignore_errors=True)
            why = "compilation timed out" if raw["timed_out"] else "compilation failed"
            return self._execution(raw, Verdict.CE, why)
        os.chown(binary, os.geteuid(), os.getegid())
        os.chmod(binary, 0o555)
        return Program("cpp", host_dir, (toolchain.BINARY_NAME,), toolchain.run_argv("cpp"),
                       compile_output=raw["stderr"])

    # -- running --------------------------------------------------------------------------
    def execute(self, program: Program, stdin: str | bytes, limits: Limits,
                data: dict[str, bytes] | None = None, args: list[str] | None = None
                ) -> Execution:
        """Run a built program once on `stdin`; `data` files appear read-only in its work
        dir (only checker programs get any: contestants never see expected outputs)."""
        stdin_b = stdin.encode() if isinstance(stdin, str) else stdin
        with RUN_SLOTS, lease_uid() as uid:
            run_dir = self._make_run_dir(self._uid_for_spawn(uid), data or {})
            try:
                job = Spawn(program.argv + list(args or []), run_dir, program, False, stdin_b,
                            limits.time_s, self._run_rlimits(limits), limits.output_kb << 10,
                            limits.stderr_kb << 10, uid, limits.tmp_mb)
                raw = self._spawn(job)
            finally:
                self._after_run(uid)
                shutil.rmtree(run_dir, ignore_errors=True)
        verdict, message = classify(raw, limits)
        if program.language == "python" and verdict is Verdict.RE and _python_ce(raw["stderr"]):
            verdict, message = Verdict.CE, "the Python source does not compile"
        return self._execution(raw, verdict, message)

    def _run_rlimits(self, limits: Limits) -> dict[str, int]:
        return rlimits_for(limits.memory_mb, limits.cpu_limit_s, limits.max_processes,
                           limits.file_size_mb)

    def _after_run(self, uid: int | None) -> None:
        """Hook for clean-up that must happen while the uid is still leased."""

    @staticmethod
    def _make_run_dir(owner: int | None, data: dict[str, bytes]) -> str:
        run_dir = tempfile.mkdtemp(prefix="envgym-run-")
        for name, content in data.items():
            path = os.path.join(run_dir, name)
            with open(path, "wb") as fh:
                fh.write(content)
            if owner is not None:
                os.chown(path, owner, owner)
            os.chmod(path, 0o444)
        if owner is not None:
            os.chown(run_dir, owner, owner)
        return run_dir

    def _execution(self, raw: dict[str, Any], verdict: Verdict, message: str) -> Execution:
        return Execution(verdict=verdict, stdout=raw["stdout"], stderr=raw["stderr"],
                         exit_code=raw["exit_code"], signal=raw["signal"],
                         wall_time=raw["wall_time"], cpu_time=raw["cpu_time"],
                         memory_kb=raw["memory_kb"], truncated=raw["truncated"],
                         backend=self.name, message=message)


def _is_regular(path: str) -> bool:
    """True for a plain file; a symlink planted by the build would otherwise be followed."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _python_ce(stderr: str) -> bool:
    """A SyntaxError of the main script prints no traceback header; one raised later by
    eval/exec does, and is a runtime error."""
    return "Traceback (most recent call last)" not in stderr and bool(
        _PY_COMPILE_ERROR.search(stderr))

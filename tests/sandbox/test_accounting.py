"""What a run reports about the program itself: exact exit status or signal, CPU time, peak
memory. Under bwrap these come from the in-sandbox init, never from bwrap's own process."""

from __future__ import annotations

import pytest

from envgym.sandbox import Limits, Verdict, run
from envgym.sandbox.backends import bwrap_init

# Roomy wall limits: the CPU work must finish even when the machine is shared and loaded.
ROOMY = Limits(time_s=20.0, memory_mb=512)

CPU_BURN = """#include <cstdio>
#include <ctime>
int main(){ volatile double x = 0; long n = 0;
  while (std::clock() < 0.3 * CLOCKS_PER_SEC) { for (int i = 0; i < 100000; i++) x += i; n++; }
  std::printf("%ld\\n", n); }"""

TOUCH_200MB = """#include <cstdio>
#include <cstdlib>
int main(){ const size_t n = 200u << 20; char *p = (char *)std::malloc(n);
  for (size_t i = 0; i < n; i += 4096) p[i] = (char)i;
  std::printf("%d\\n", p[4096 * 7]); }"""


def test_cpu_time_is_the_programs(backend):
    ex = run(CPU_BURN, "cpp", limits=ROOMY, backend=backend)
    assert ex.verdict is Verdict.AC, ex
    assert ex.cpu_time >= 0.2  # bwrap's own monitor uses a few milliseconds


def test_peak_memory_is_the_programs(backend):
    ex = run(TOUCH_200MB, "cpp", limits=ROOMY, backend=backend)
    assert ex.verdict is Verdict.AC, ex
    assert ex.memory_kb >= 150_000


def test_exit_139_is_an_exit_code_not_a_signal(backend):
    ex = run("#include <cstdlib>\nint main(){ std::exit(139); }", "cpp", backend=backend)
    assert (ex.verdict, ex.exit_code, ex.signal) == (Verdict.RE, 139, None)


def test_signal_raised_by_python_is_reported_as_that_signal(backend):
    ex = run("import os, signal\nos.kill(os.getpid(), signal.SIGABRT)", "python",
             backend=backend)
    assert (ex.verdict, ex.exit_code, ex.signal) == (Verdict.RE, None, 6)


def test_timed_out_run_still_reports_its_cpu_time(bwrap):
    ex = run("while True: pass", "python", limits=Limits(time_s=1.0), backend=bwrap)
    # Whichever limit fires first ends it: the wall-clock kill (SIGKILL) or, on an idle
    # machine where CPU time keeps pace with wall time, RLIMIT_CPU (SIGXCPU).
    assert ex.verdict is Verdict.TLE and ex.signal in (9, 24) and ex.exit_code is None
    assert ex.cpu_time > 0.0 and ex.memory_kb > 1000  # the interpreter's, not zero


def test_program_cannot_forge_the_init_report(bwrap):
    """The report pipe is close-on-exec and the init non-dumpable: neither an inherited fd
    nor /proc/1/fd or /proc/1/mem lets the program write a fake 'exited 0, 1 KB' report
    (as root the pipe is also root-owned; the listing check proves the non-root guard)."""
    src = """import glob, os
fake = b"envgym-init 0 0 0 1\\n"
hits = []
for fd in range(3, 256):
    try: os.write(fd, fake); hits.append(f"fd{fd}")
    except OSError: pass
for path in glob.glob("/proc/1/fd/*") + ["/proc/1/fd/3", "/proc/1/mem"]:
    try:
        with open(path, "wb") as fh: fh.write(fake)
        hits.append(path)
    except OSError: pass
try: print("fds of pid 1:", os.listdir("/proc/1/fd"))
except PermissionError: print("fds of pid 1: denied")
print("hits", hits)
raise SystemExit(3)
"""
    ex = run(src, "python", limits=Limits(time_s=5.0), backend=bwrap)
    # Denied even where the pipe's inode would be writable by the sandbox uid (not root).
    assert ex.stdout == "fds of pid 1: denied\nhits []\n"
    assert (ex.verdict, ex.exit_code, ex.signal) == (Verdict.RE, 3, None)
    assert ex.memory_kb > 1000


def test_killing_pid_1_from_inside_changes_nothing(bwrap):
    src = "import os, signal\nos.kill(1, signal.SIGKILL)\nos.kill(1, signal.SIGSTOP)\nprint('ok')"
    ex = run(src, "python", limits=Limits(time_s=5.0), backend=bwrap)
    assert (ex.verdict, ex.stdout, ex.exit_code) == (Verdict.AC, "ok\n", 0)


@pytest.mark.parametrize("report", [b"", b"envgym-init 0 0 0 1\nenvgym-init 0 0 0 1\n",
                                    b"envgym-init 0 0 0 1", b"garbage\n"])
def test_missing_or_malformed_report_is_a_sandbox_error(report):
    raw = {"exit_code": 0, "signal": None, "timed_out": False, "truncated": False,
           "stdout": "", "stderr": "", "wall_time": 0.1, "cpu_time": 0.002, "memory_kb": 900,
           "spawn_error": None}
    out = bwrap_init.apply_report(raw, report)
    assert out["spawn_error"] and out["exit_code"] == 0


def test_well_formed_report_decodes_the_wait_status():
    raw = {"exit_code": 139, "signal": None, "timed_out": False, "truncated": False,
           "stdout": "", "stderr": "", "wall_time": 0.1, "cpu_time": 0.002, "memory_kb": 900,
           "spawn_error": None}
    out = bwrap_init.apply_report(raw, b"envgym-init 11 0 250000 204800\n")  # status 11 = SIGSEGV
    assert (out["exit_code"], out["signal"], out["cpu_time"], out["memory_kb"]) == (
        None, 11, 0.25, 204800)
    out = bwrap_init.apply_report(raw, b"envgym-init 768 1 5 6\n")  # 768 = exit(3) << 8
    assert (out["exit_code"], out["signal"], out["timed_out"]) == (3, None, True)


@pytest.mark.parametrize("backend_name", ["bwrap", "subprocess"])
def test_peak_memory_is_the_programs_not_a_large_hosts(backend_name):
    """A program forked from a big host process must not inherit the host's peak RSS
    (CI's pytest process holds models): that once turned every run into an MLE."""
    ballast = bytearray(b"\x01") * (700 << 20)  # 700 MB resident in this process
    ex = run("print(1)", "python", backend=backend_name)
    assert ex.verdict is Verdict.AC and 0 < ex.memory_kb < 200_000, ex
    del ballast

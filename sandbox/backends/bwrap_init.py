"""The bwrap sandbox's pid 1: a tiny C supervisor that runs the program and reports on it.

The subprocess backend runs it too (not as pid 1), for the same exact report: a program
forked straight from a large Python host inherits the host's peak RSS in `ru_maxrss`
(Linux records the pre-exec high-water mark), so a 10 MB program forked from a 700 MB test
process looked like a memory-limit breach.

Why: bwrap's own exit status folds a signal into 128 + N (a program that calls `exit(139)`
looks like a segfault) and the rusage the host gets from `wait4(bwrap)` is that of bwrap's
monitor, not of the program. So bwrap runs this init instead (`--as-pid-1`); it forks and
execs the program, waits for it, and writes the exact wait status, CPU time and peak RSS to
a pipe that only the host reads.

Why the program cannot forge that report: the pipe's fd is close-on-exec, so the program
never holds it; the init makes itself non-dumpable, so the program (same uid, no
capabilities) can neither ptrace it nor open `/proc/1/fd/N`; and as pid 1 of the pid
namespace it cannot be killed or stopped from inside (the kernel drops SIGKILL/SIGSTOP sent
to a namespace init by its own namespace). The init also enforces the wall-clock limit, so a
timed-out program still gets its true CPU time; the host keeps a backstop deadline.

The source is compiled once per machine (per source hash) into a root-owned cache directory.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
from typing import Any

from envgym.errors import SandboxUnavailable

SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* usage: envgym-init REPORT_FD WALL_MS PROGRAM [ARGS...] */
static void on_alarm(int sig) { (void)sig; }

static long long now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main(int argc, char **argv) {
  if (argc < 4) return 125;
  int fd = atoi(argv[1]);
  long long wall_ms = atoll(argv[2]);
  if (prctl(PR_SET_DUMPABLE, 0) != 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return 125;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: the alarm interrupts wait4 */
  sigaction(SIGALRM, &sa, NULL);
  long long deadline = now_us() + wall_ms * 1000;
  /* as a namespace's pid 1 (bwrap) a timeout kills everything inside; as a plain child
     (the subprocess backend) only the program: kill(-1) would reach all of the uid's
     processes, and the host kills the rest of the session's group afterwards */
  int ns_init = getpid() == 1;
  pid_t pid = fork();
  if (pid < 0) { perror("envgym-init: fork"); return 125; }
  if (pid == 0) {
    execvp(argv[3], argv + 3);
    fprintf(stderr, "envgym-init: execvp %s: %s\n", argv[3], strerror(errno));
    _exit(127);
  }
  struct itimerval it = {{0, 0}, {wall_ms / 1000, (wall_ms % 1000) * 1000}};
  setitimer(ITIMER_REAL, &it, NULL);
  int status = 0, timed_out = 0;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) != pid) {
    if (errno != EINTR) return 125;
    long long left = deadline - now_us();
    if (timed_out) continue;
    if (left <= 0) { timed_out = 1; kill(ns_init ? -1 : pid, SIGKILL); continue; }
    /* a SIGALRM the program sent early: re-arm for the time that is really left */
    struct itimerval again = {{0, 0}, {left / 1000000, left % 1000000}};
    setitimer(ITIMER_REAL, &again, NULL);
  }
  long long cpu_us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL
                     + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
  char line[128];
  int n = snprintf(line, sizeof line, "envgym-init %d %d %lld %ld\n", status, timed_out,
                   cpu_us, ru.ru_maxrss);
  if (write(fd, line, n) != n) return 125;
  close(fd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
"""

PATH_INSIDE = "/.envgym-init"
_REPORT = re.compile(rb"\Aenvgym-init (\d+) ([01]) (\d+) (\d+)\n\Z")
_lock = threading.Lock()


def command(report_fd: int, wall_s: float, argv: list[str], init: str = PATH_INSIDE) -> list[str]:
    """The init (at its path inside bwrap by default), then the program's command line."""
    return [init, str(report_fd), str(max(1, round(wall_s * 1000))), *argv]


def read_report(fd: int) -> bytes:
    """Everything the init wrote (it has exited by the time bwrap has; never blocks)."""
    os.set_blocking(fd, False)
    chunks = []
    try:
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
    except BlockingIOError:
        pass
    return b"".join(chunks)


def apply_report(raw: dict[str, Any], report: bytes) -> dict[str, Any]:
    """Replace bwrap's view of the run with the init's exact one.

    Without a well-formed report the run was cut off by the host (its backstop deadline or an
    output flood, which `raw` already records) or bwrap failed before the program ran (a
    sandbox error: nothing is known about the program, so it is never scored)."""
    found = _REPORT.match(report)
    if found is None:
        if raw.get("spawn_error") or raw["timed_out"] or raw["truncated"]:
            return {**raw, "cpu_time": 0.0, "memory_kb": 0}
        detail = raw["stderr"] or f"exit code {raw['exit_code']}, signal {raw['signal']}"
        why = f"bwrap ran no program to completion: {detail.strip()[-300:]}"
        return {**raw, "spawn_error": why}
    status, timed_out, cpu_us, maxrss = (int(g) for g in found.groups())
    return {**raw,
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "timed_out": raw["timed_out"] or bool(timed_out),
            "cpu_time": round(cpu_us / 1e6, 6), "memory_kb": maxrss}


def binary() -> str:
    """The compiled init on the host, building it on first use (once per machine)."""
    digest = hashlib.sha256(SOURCE.encode()).hexdigest()[:16]
    with _lock:
        folder = _cache_dir()
        path = os.path.join(folder, f"init-{digest}")
        if not _trusted(path, stat.S_ISREG):
            _compile(path)
        return path


def _cache_dir() -> str:
    """A directory only we can write to, that the leased uids may traverse (0711): under the
    shared temp dir, so an untrusted pre-existing one (another owner, writable by others) is
    never used; a private fresh one replaces it."""
    folder = os.path.join(tempfile.gettempdir(), f"envgym-sandbox-init-{os.geteuid()}")
    try:
        os.mkdir(folder, 0o711)
    except FileExistsError:
        pass
    if _trusted(folder, stat.S_ISDIR):
        return folder
    return tempfile.mkdtemp(prefix="envgym-sandbox-init-")


def _trusted(path: str, kind) -> bool:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    return kind(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def _compile(path: str) -> None:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("g++")
    if cc is None:
        raise SandboxUnavailable("the bwrap backend builds a small C init once and needs a C "
                                 "compiler for it: `apt-get install gcc`.")
    os.chmod(os.path.dirname(path), 0o711)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".build-")
    os.close(fd)
    try:
        for extra in (["-static"], []):  # static starts faster; not every libc ships libc.a
            proc = subprocess.run([cc, "-x", "c", "-O2", *extra, "-o", tmp, "-"],
                                  input=SOURCE.encode(), capture_output=True, timeout=120)
            if proc.returncode == 0:
                break
        else:
            raise SandboxUnavailable(f"could not compile the bwrap sandbox's init with {cc}: "
                                     f"{proc.stderr.decode(errors='replace')[-300:]}")
        os.chmod(tmp, 0o555)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)

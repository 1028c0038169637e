"""The always-available backend: process hygiene, NOT a security boundary.

Covered: rlimits (memory, CPU, processes, file size), a new session killed as a group, a fresh
temp work dir, a scrubbed environment, capped output, and, when envgym runs as root, a
dedicated unprivileged uid per run whose every process is killed afterwards (so daemons do
not survive and the parent cannot be signalled).
Not covered: the network, the host filesystem (readable wherever the uid may read), kernel
attack surface. Use bwrap or docker for model-written code.
"""

from __future__ import annotations

import logging
import os
import warnings
from typing import Any

from .. import toolchain
from .._supervise import supervise
from ..uids import clear_uid
from . import bwrap_init
from .base import Backend, Spawn

_BACKSTOP_S = 0.5  # the init enforces the wall clock; the host kills only if that failed

log = logging.getLogger("envgym.sandbox")

NOT_ISOLATED = ("envgym.sandbox: the 'subprocess' backend is NOT a security boundary: the "
                "program can reach the network and read the host filesystem. Install "
                "bubblewrap (`apt-get install bubblewrap`) or use backend='docker' for "
                "untrusted code.")


class SandboxNotIsolatedWarning(RuntimeWarning):
    """Emitted whenever the non-isolating backend is selected."""


class SubprocessBackend(Backend):
    name = "subprocess"
    isolated = False

    def __init__(self, *, warn: bool = True) -> None:
        # the same tiny C supervisor as bwrap's pid 1: exact wait status, CPU time and the
        # program's own peak RSS (see bwrap_init for why a direct child's RSS is wrong)
        self.init = bwrap_init.binary()
        if warn:
            log.warning(NOT_ISOLATED)
            warnings.warn(NOT_ISOLATED, SandboxNotIsolatedWarning, stacklevel=3)

    def _spawn(self, job: Spawn) -> dict[str, Any]:
        if job.program is not None:
            for name in job.program.files:
                os.symlink(os.path.join(job.program.dir, name), os.path.join(job.run_dir, name))
        rlimits = dict(job.rlimits)
        if job.uid is None and "NPROC" in rlimits:
            # Without a private uid the count includes every process this user already has.
            rlimits["NPROC"] += _processes_of(os.getuid())
        read_end, write_end = os.pipe()
        try:
            raw = supervise(bwrap_init.command(write_end, job.wall_s, job.argv, self.init),
                            stdin=job.stdin, cwd=job.run_dir,
                            env=toolchain.sandbox_env(job.run_dir, job.run_dir), rlimits=rlimits,
                            wall_s=job.wall_s + _BACKSTOP_S, stdout_cap=job.stdout_cap,
                            stderr_cap=job.stderr_cap, user=job.uid, group=job.uid,
                            pass_fds=(write_end,))
            os.close(write_end)
            write_end = -1
            report = bwrap_init.read_report(read_end)
            if not report and not raw.get("spawn_error"):
                # same uid, no namespace: the program may kill its supervisor. Keep the host's
                # view of the exit, without the RSS the init inherited from this process.
                return {**raw, "memory_kb": 0}
            return bwrap_init.apply_report(raw, report)
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)

    def _after_run(self, uid: int | None) -> None:
        if uid is not None:
            clear_uid(uid)


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                count += os.stat(f"/proc/{entry}").st_uid == uid
            except FileNotFoundError:
                continue
    return count

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
from .base import Backend, Spawn

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
        return supervise(job.argv, stdin=job.stdin, cwd=job.run_dir,
                         env=toolchain.sandbox_env(job.run_dir, job.run_dir), rlimits=rlimits,
                         wall_s=job.wall_s, stdout_cap=job.stdout_cap,
                         stderr_cap=job.stderr_cap, user=job.uid, group=job.uid)

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

"""The default isolating backend: bubblewrap (GEM's invocation, hardened).

Each run gets new user/pid/net/ipc/uts/cgroup namespaces (`--unshare-all`: only an isolated
`lo`), `/usr` read-only with every site-/dist-packages folder and envgym's own package folders
masked by an empty tmpfs (hidden tests ship as package data; the program sees the interpreter,
its standard library and the compiler toolchain only), nothing else of the host (no /etc,
/root, /home, no project checkout), a private,
size-capped tmpfs for `/tmp` and for the work dir `/box`, `--die-with-parent`, a new session
and uid 65534 inside. When envgym is root, bwrap itself runs as a leased unprivileged uid so
that RLIMIT_NPROC bites (the kernel ignores it for uid 0). The namespace's pid 1 is our
init (`bwrap_init`): it enforces the wall clock and reports the program's exact exit status
or signal, CPU time and peak RSS. When it exits, the kernel kills everything left in the
pid namespace: daemons cannot outlive the run.
"""

from __future__ import annotations

import functools
import os
import shutil
from typing import Any

from envgym.errors import SandboxUnavailable

from .. import toolchain
from .._supervise import rlimits_for, supervise
from ..uids import can_switch_uid, clear_uid, lease_uid
from . import bwrap_init
from .base import Backend, Spawn

WORK = "/box"
# The init enforces the wall-clock limit; the host kills bwrap only if that failed.
_BACKSTOP_S = 0.5
_HINTS = {
    "setting up uid map": "the kernel refuses unprivileged user namespaces (Ubuntu >= 23.10 "
    "AppArmor): run `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`",
    "Failed to make / slave": "this container lacks CAP_SYS_ADMIN/user namespaces: run it "
    "with user namespaces enabled, or use backend='docker' on the host",
    "No permissions to creating new namespace": "user namespaces are disabled: run "
    "`sysctl -w kernel.unprivileged_userns_clone=1`",
}


class BwrapBackend(Backend):
    name = "bwrap"
    isolated = True

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable or shutil.which("bwrap")
        if self.executable is None:
            raise SandboxUnavailable("bubblewrap is not installed: `apt-get install "
                                     "bubblewrap` (Debian/Ubuntu) or `dnf install bubblewrap`.")
        self.drop_uid = can_switch_uid()
        self.init = bwrap_init.binary()
        self._probe()

    def _uid_for_spawn(self, uid: int | None) -> int | None:
        return uid if self.drop_uid else None

    def _probe(self) -> None:
        """Run hello-world under the exact command line we will use (A.12: never assume).
        As root, fall back to running bwrap as root if unprivileged namespaces are refused;
        the pid namespace and the wall clock still contain a fork bomb then."""
        reason = self._probe_once()
        if reason and self.drop_uid:
            self.drop_uid = False
            if self._probe_once() is None:
                return
        if reason:
            hint = next((h for k, h in _HINTS.items() if k in reason), "see the message")
            raise SandboxUnavailable(f"bubblewrap is installed but cannot start a sandbox here "
                                     f"({reason.strip()[:300]}); fix: {hint}.")

    def _probe_once(self) -> str | None:
        argv = [toolchain.python().executable, "-I", "-c", "print('envgym-probe')"]
        with lease_uid() as uid:
            run_dir = self._make_run_dir(self._uid_for_spawn(uid), {})
            try:
                raw = self._spawn(Spawn(argv, run_dir, None, False, b"", 10.0,
                                        rlimits_for(256, 10, 64, 16), 4096, 4096, uid))
            finally:
                shutil.rmtree(run_dir, ignore_errors=True)
        if raw.get("spawn_error"):
            return raw["spawn_error"]
        if raw["exit_code"] != 0 or raw["stdout"].strip() != "envgym-probe":
            return raw["stderr"] or f"exit code {raw['exit_code']}, signal {raw['signal']}"
        return None

    def _spawn(self, job: Spawn) -> dict[str, Any]:
        """Run the job under bwrap with our init as pid 1; its report (exact wait status,
        CPU time, peak RSS of the program) replaces what the host sees of bwrap itself."""
        user = job.uid if self.drop_uid else None
        read_end, write_end = os.pipe()
        try:
            raw = supervise(self._command(job, write_end), stdin=job.stdin, env={},
                            rlimits=job.rlimits, wall_s=job.wall_s + _BACKSTOP_S,
                            stdout_cap=job.stdout_cap, stderr_cap=job.stderr_cap, user=user,
                            group=user, pass_fds=(write_end,))
            os.close(write_end)
            write_end = -1
            return bwrap_init.apply_report(raw, bwrap_init.read_report(read_end))
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)

    def _after_run(self, uid: int | None) -> None:
        """bwrap exits as soon as our init does, while the kernel may still be tearing
        down the pid namespace (a fork bomb's children); wait for that before the uid is
        handed to the next run."""
        if uid is not None and self.drop_uid:
            clear_uid(uid)

    def _command(self, job: Spawn, report_fd: int) -> list[str]:
        tmp_size = str(job.tmp_mb << 20)
        cmd = [self.executable, "--unshare-all", "--unshare-user", "--die-with-parent",
               "--new-session", "--as-pid-1", "--hostname", "sandbox", *_system_mounts(),
               "--ro-bind", self.init, bwrap_init.PATH_INSIDE,
               "--proc", "/proc", "--dev", "/dev", "--size", tmp_size, "--tmpfs", "/tmp"]
        if job.writable:
            cmd += ["--bind", job.run_dir, WORK]
        else:
            cmd += ["--size", tmp_size, "--tmpfs", WORK]
            if job.program is not None:
                cmd += _binds(job.program.dir, job.program.files)
            cmd += _binds(job.run_dir, tuple(sorted(os.listdir(job.run_dir))))
        cmd += ["--chdir", WORK, "--remount-ro", "/", "--uid", "65534", "--gid", "65534",
                "--clearenv"]
        for key, value in toolchain.sandbox_env(WORK, "/tmp").items():
            cmd += ["--setenv", key, value]
        return cmd + ["--", *bwrap_init.command(report_fd, job.wall_s, job.argv)]


def _binds(host_dir: str, names: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for name in names:
        out += ["--ro-bind", os.path.join(host_dir, name), f"{WORK}/{name}"]
    return out


@functools.lru_cache(maxsize=1)
def _system_mounts() -> tuple[str, ...]:
    """/usr read-only; /bin, /lib, /lib64, /sbin as the host has them (merged-/usr symlinks
    or real directories); the interpreter's prefix when it lives outside /usr. Then every
    directory a program could find problem data in is covered by an empty tmpfs: the
    interpreters' site-/dist-packages (a system-wide `pip install envgym` puts the hidden tests
    there) and envgym's own package folders wherever they sit under a bound tree."""
    args = ["--ro-bind", "/usr", "/usr"]
    roots = ["/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
            roots.append(top)
    prefix = toolchain.python().prefix
    if prefix != "/usr" and not prefix.startswith("/usr/"):
        args += ["--ro-bind", prefix, prefix]
        roots.append(prefix)
    for path in hidden_dirs(roots):
        args += ["--tmpfs", path]
    return tuple(args)


_PACKAGE_DIRS = ("lib*/python*/site-packages", "lib*/python*/dist-packages",
                 "lib*/python3/dist-packages", "local/lib*/python*/site-packages",
                 "local/lib*/python*/dist-packages", "lib*/pypy*/site-packages")


def hidden_dirs(roots: list[str]) -> list[str]:
    """Directories under the bound `roots` that the sandbox must see empty: third-party
    package folders and envgym's own (package data holds hidden tests), plus any path in
    `ENVGYM_SANDBOX_HIDE` (os.pathsep-separated; e.g. a dataset directory under /usr)."""
    import glob

    found = {os.path.realpath(p) for root in roots for pattern in _PACKAGE_DIRS
             for p in glob.glob(os.path.join(root, pattern)) if os.path.isdir(p)}
    found |= {os.path.realpath(p) for p in _envgym_dirs()}
    found |= {os.path.realpath(p) for p in os.environ.get("ENVGYM_SANDBOX_HIDE", "").split(
        os.pathsep) if p and os.path.isdir(p)}
    real_roots = [os.path.realpath(r) for r in roots]
    inside = [p for p in found if any(p == r or p.startswith(r + os.sep) for r in real_roots)]
    # a folder inside another hidden one is hidden already (and could not be mounted on)
    return sorted(p for p in inside if not any(p.startswith(q + os.sep) for q in inside))


def _envgym_dirs() -> list[str]:
    import envgym

    dirs = [os.path.dirname(envgym.__file__)]
    try:
        import envgym.environments as environments

        dirs += list(environments.__path__)
    except ImportError:
        pass
    return dirs

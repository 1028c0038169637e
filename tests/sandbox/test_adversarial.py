"""Hostile programs: each must get a verdict, leave the host unchanged, and leave the worker
healthy. Every assertion names the specific containment, not just "not AC".

Network checks use only a listener on the host's loopback and interface listings inside the
sandbox; no test ever aims at an address outside this machine.
"""

from __future__ import annotations

import os
import secrets
import socket

import pytest

from envgym.sandbox import Limits, Verdict, judge, run

FAST = Limits(time_s=1.0, memory_mb=256)  # for programs that must be cut off
ROOMY = Limits(time_s=5.0, memory_mb=256)  # for programs that must finish, even on a busy box
pytestmark = pytest.mark.usefixtures("host_unchanged")


def healthy(backend) -> bool:
    """The worker still runs ordinary programs after the hostile one."""
    return run("print(6 * 7)", "python", backend=backend).stdout == "42\n"


def test_python_fork_bomb_is_contained(backend):
    ex = run("import os\nwhile True:\n    os.fork()", "python", limits=FAST, backend=backend)
    assert ex.verdict in (Verdict.RE, Verdict.TLE) and ex.wall_time < FAST.time_s + 1.5
    assert healthy(backend)


def test_cpp_fork_bomb_that_ignores_failures_is_tle(backend):
    src = "#include <unistd.h>\nint main(){ for(;;) fork(); }"
    ex = run(src, "cpp", limits=FAST, backend=backend)
    assert ex.verdict is Verdict.TLE and ex.wall_time < FAST.time_s + 1.5
    assert healthy(backend)


def test_memory_bomb_is_mle(backend):
    limits = Limits(time_s=5.0, memory_mb=256)  # allocation is slow on a loaded machine
    ex = run("x = []\nwhile True:\n    x.append(' ' * 10**7)", "python", limits=limits,
             backend=backend)
    assert ex.verdict is Verdict.MLE and "MemoryError" in ex.stderr


def test_infinite_loop_ignoring_sigterm_is_killed(backend):
    src = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass"
    ex = run(src, "python", limits=FAST, backend=backend)
    assert ex.verdict is Verdict.TLE and ex.wall_time < FAST.time_s + 1.0


def test_output_flood_is_cut_and_ole(backend):
    ex = run("while True:\n    print('x' * 1000)", "python", limits=FAST, backend=backend)
    assert ex.verdict is Verdict.OLE and ex.truncated
    assert len(ex.stdout.encode()) <= FAST.output_kb * 1024


def test_one_gigabyte_file_write_is_stopped(backend):
    src = ("with open('big.bin', 'wb') as f:\n"
           "    for _ in range(1024):\n        f.write(b'0' * (1 << 20))\nprint('wrote 1 GB')")
    ex = run(src, "python", limits=ROOMY, backend=backend)
    assert ex.verdict is Verdict.OLE and "wrote 1 GB" not in ex.stdout


def test_many_files_cannot_fill_the_tmpfs(bwrap):
    src = ("for i in range(100):\n    with open(f'/tmp/f{i}', 'wb') as f:\n"
           "        f.write(b'0' * (15 << 20))\nprint('filled')")
    ex = run(src, "python", limits=ROOMY, backend=bwrap)
    assert ex.verdict is Verdict.OLE and "No space left" in ex.stderr


def test_no_network_to_host_loopback_and_only_lo(bwrap):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    src = f"""import socket
print(sorted(name for _, name in socket.if_nameindex()))
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=0.5)
    print("CONNECTED")
except OSError as e:
    print("refused", type(e).__name__)
"""
    try:
        ex = run(src, "python", limits=ROOMY, backend=bwrap)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever reached the host's listener
    finally:
        listener.close()
    assert ex.stdout.splitlines()[0] == "['lo']"
    assert "CONNECTED" not in ex.stdout and "refused" in ex.stdout


def test_host_secrets_are_not_readable(bwrap, monkeypatch):
    token = secrets.token_hex(8)
    monkeypatch.setenv("ENVGYM_SECRET", token)
    secret = f"/root/.envgym-secret-{secrets.token_hex(4)}"
    with open(secret, "w") as fh:
        fh.write(token)
    src = f"""import os, glob
for path in ["{secret}", "/etc/shadow", "/etc/passwd"]:
    try: print(open(path).read())
    except OSError as e: print("denied", path, type(e).__name__)
try: print(os.listdir("/root"))
except OSError as e: print("denied /root")
for env in glob.glob("/proc/*/environ"):
    try: print(open(env, "rb").read())
    except OSError: pass
print(os.environ)
"""
    try:
        ex = run(src, "python", limits=ROOMY, backend=bwrap)
    finally:
        os.remove(secret)
    assert token not in ex.stdout and "root:" not in ex.stdout
    assert f"denied {secret}" in ex.stdout and "denied /etc/shadow" in ex.stdout


def test_writes_outside_the_work_dir_do_not_reach_the_host(bwrap, tmp_path):
    token = secrets.token_hex(8)
    targets = [str(tmp_path / "pwned"), f"/tmp/envgym-pwned-{token}", "/usr/pwned", "/pwned"]
    src = f"""for path in {targets!r}:
    try:
        open(path, "w").write("x"); print("wrote", path)
    except OSError as e:
        print("blocked", path, type(e).__name__)
"""
    ex = run(src, "python", limits=ROOMY, backend=bwrap)
    for path in targets:
        assert not os.path.exists(path), path
    assert "blocked /usr/pwned" in ex.stdout and "blocked /pwned" in ex.stdout


def test_symlink_escape_reaches_nothing_on_the_host(backend, tmp_path):
    token = secrets.token_hex(8)
    victim = tmp_path / "victim.txt"
    victim.write_text(token)
    os.chmod(tmp_path, 0o700)  # as on a real host: other users' files are not readable
    src = f"""import os
os.symlink({str(victim)!r}, "link")
try: print(open("link").read())
except OSError as e: print("read blocked", type(e).__name__)
try: open("link", "w").write("overwritten"); print("write went through")
except OSError as e: print("write blocked", type(e).__name__)
"""
    ex = run(src, "python", limits=ROOMY, backend=backend)
    assert token not in ex.stdout and victim.read_text() == token
    assert "read blocked" in ex.stdout


def test_background_daemon_does_not_outlive_the_run(backend):
    marker = "envgym-daemon-" + secrets.token_hex(6)
    src = f"""import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/usr/bin/sleep", ["{marker}", "30"])
    os._exit(0)
print("parent done")
"""
    ex = run(src, "python", limits=ROOMY, backend=backend)
    assert ex.verdict is Verdict.AC and ex.wall_time < ROOMY.time_s
    survivors = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline_has(p, marker)]
    assert survivors == []


def _cmdline_has(pid: str, marker: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return marker.encode() in fh.read()
    except OSError:
        return False


def test_killing_the_parent_does_not_hurt_the_host(backend):
    src = """import os, signal
for pid in (os.getppid(), 1):
    try: os.kill(pid, signal.SIGKILL); print("killed", pid)
    except OSError as e: print("refused", pid, type(e).__name__)
"""
    ex = run(src, "python", limits=ROOMY, backend=backend)
    assert ex.verdict in (Verdict.AC, Verdict.RE)
    assert healthy(backend)  # this test process, the judge, is still alive and working


def test_sys_exit_zero_before_printing_is_wa(backend):
    src = "import sys\nsys.exit(0)\nprint(int(input()) * 2)"
    j = judge(src, "python", [{"input": "21", "output": "42"}], backend=backend)
    assert j.verdict is Verdict.WA and j.passed == 0


def test_expected_output_is_never_visible_inside(backend):
    token = "expected-" + secrets.token_hex(8)
    src = """import glob, os, tempfile
seen = []
for path in glob.glob("/tmp/envgym-*/**", recursive=True):
    try: seen.append(open(path, errors="ignore").read(4096))
    except OSError: pass
for root in {".", "/box", tempfile.gettempdir()}:
    for dirpath, _, files in os.walk(root):
        for name in files:
            try: seen.append(open(os.path.join(dirpath, name), errors="ignore").read(4096))
            except OSError: pass
for name in ("expected.txt", "answer.txt", "output.txt", "expected_output"):
    try: seen.append(open(name).read())
    except OSError: pass
print(" ".join(seen)[-2000:])
"""
    j = judge(src, "python", [{"input": "", "output": token}], backend=backend)
    assert j.verdict is Verdict.WA and token not in j.tests[0].stdout_head

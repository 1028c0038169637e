"""A server CLI in a child process, as an operator runs it: `--port 0`, the port read from
its ready line (so the line is proof of the bind), SIGTERM at the end with its exit status."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path


def envgym_command() -> list[str]:
    exe = shutil.which("envgym", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "envgym.cli"]


class ServerProcess:
    def __init__(self, args: list[str], log: Path, ready_timeout: float = 180.0):
        self.log = log
        with open(log, "w") as sink:  # a file: a pipe nobody reads would stall the server
            self.proc = subprocess.Popen(
                [*envgym_command(), *args, "--port", "0"], stdout=sink, stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"})
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            match = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", self.text())
            if match:
                self.url = f"http://127.0.0.1:{match.group(1)}"
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}: {self.text()}")
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"no ready line in {ready_timeout}s: {self.text()}")

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def terminate(self, timeout: float) -> tuple[int, float]:
        """SIGTERM; (exit status, seconds to exit). Killed (and -9 returned) past `timeout`."""
        start = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            code = -9
        return code, time.monotonic() - start

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

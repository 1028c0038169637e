"""Servers for the integration tests, all on 127.0.0.1.

`served_timeseries` is the real command, `envgym serve-env envgym/TimeSeries-v0`, in a child
process (what a user runs). Other servers run in a thread of the test process (uvicorn over the
same `build_app`), which starts in a second instead of paying the CLI's imports again.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, timeout: float = 180.0, proc: subprocess.Popen | None = None,
                 log: Path | None = None) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {log.read_text() if log else ''}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not become healthy in {timeout}s")


def envgym_command() -> list[str]:
    exe = shutil.which("envgym", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "envgym.cli"]


@pytest.fixture(scope="session")
def served_timeseries(tmp_path_factory):
    """`envgym serve-env envgym/TimeSeries-v0` with 8 sessions; yields its URL.

    Its output goes to a file: a pipe nobody reads fills up and stalls the server."""
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "serve-env.log"
    with open(log, "w") as sink:
        proc = subprocess.Popen(
            [*envgym_command(), "serve-env", "envgym/TimeSeries-v0", "--port", str(port),
             "--max-sessions", "8", "--idle-timeout", "120", "--ping-interval", "2"],
            stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc=proc, log=log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


class ThreadServer:
    """uvicorn in a daemon thread; `stop()` shuts it down like a server going away."""

    def __init__(self, app, **options):
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> ThreadServer:
        self.thread.start()
        wait_healthy(self.url, timeout=60)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


@pytest.fixture
def thread_server():
    """Factory: `thread_server(app, **uvicorn_options)` → a started ThreadServer."""
    started: list[ThreadServer] = []

    def start(app, **options) -> ThreadServer:
        server = ThreadServer(app, **options).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def envgym_cmd() -> list[str]:
    return envgym_command()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A one-layer tiny model (hidden 48): generation costs milliseconds per token."""
    from envgym.agents.tiny import build_tiny_model

    return Path(build_tiny_model(tmp_path_factory.mktemp("tiny") / "m", hidden_size=48,
                                 layers=1, include_envs=False))

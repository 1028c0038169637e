"""How envgym's servers run: readiness after the bind, graceful SIGTERM, exit status 0.

Shared by `serve-policy`, `serve-env` and `serve-retriever`. uvicorn already stops accepting
on SIGTERM and waits for in-flight requests; on top of it this module

* prints the ready line only once the socket is bound (with the real port, so `--port 0`
  works for tests and supervisors);
* bounds the wait by `shutdown_timeout` seconds (uvicorn's graceful-shutdown timeout, then
  its in-flight tasks are cancelled), and calls `on_stop(deadline)` first so a server with
  its own queue (the policy scheduler) can finish or fail its work before that deadline;
* exits 0: uvicorn re-raises a caught SIGTERM after shutting down, which would make
  the process die by the signal (status 143) even after a clean drain.

A watchdog ends the process 2 s past the deadline if a worker thread still holds it (a
thread running native code cannot be cancelled).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["run_server"]


def _server_class() -> type:
    import uvicorn

    class _Server(uvicorn.Server):
        def __init__(self, config: Any, ready: str | None, on_stop: Callable[[float], None]
                     | None, shutdown_timeout: float):
            super().__init__(config)
            self.ready, self.on_stop, self.shutdown_timeout = ready, on_stop, shutdown_timeout
            self._stopping = False

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started and self.ready is not None:
                port = next((s.getsockname()[1] for srv in self.servers
                             for s in srv.sockets), self.config.port)
                print(self.ready.format(port=port), file=sys.stderr, flush=True)

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            if self._stopping:
                return
            self._stopping = True
            deadline = time.monotonic() + self.shutdown_timeout
            if self.on_stop is not None:
                self.on_stop(deadline)
            threading.Thread(target=_watchdog, args=(deadline + 2.0,), daemon=True).start()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            """uvicorn's, without re-raising the signal afterwards (a drained server exits 0)."""
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    return _Server


def _watchdog(at: float) -> None:
    time.sleep(max(0.0, at - time.monotonic()))
    print("shutdown: work still running past --shutdown-timeout; exiting", file=sys.stderr,
          flush=True)
    os._exit(0)


def make_server(app: Any, *, host: str, port: int, shutdown_timeout: float = 10.0,
                ready: str | None = None, on_stop: Callable[[float], None] | None = None,
                **uvicorn_options: Any) -> Any:
    """A uvicorn server with the behaviour above (`.run()` it, or serve it in a thread)."""
    import uvicorn

    options = {"log_level": "warning", **uvicorn_options}
    config = uvicorn.Config(app, host=host, port=port,
                            timeout_graceful_shutdown=max(0.1, shutdown_timeout), **options)
    return _server_class()(config, ready, on_stop, shutdown_timeout)


def run_server(app: Any, **kwargs: Any) -> None:
    """Serve `app` in the foreground until SIGTERM/SIGINT, drain, and end the process.

    After a signal-driven drain the process exits 0 at once: interpreter teardown with torch
    and transformers loaded takes seconds (measured 4 s for the tiny model) and would push
    the exit past `--shutdown-timeout` with nothing left to do."""
    server = make_server(app, **kwargs)
    server.run()
    if server._stopping:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

"""`model.backend = "server"`: the rollout policy is `envgym serve-policy` in a process of
its own, sampled through the token-mode HTTP client (`OpenAIPolicy`).

Why a process: generation then runs beside the learner on its own interpreter (no shared
GIL) and its own cores, as a served engine would on a cluster. The trainer starts the child
on 127.0.0.1 with a free port (`--port 0`; the port is read from its ready line in
`OUT/policy_server.log`), serving the run's starting model with `--allow-weight-sync`. Each
weight sync writes the rollout weights atomically to `OUT/served_weights/model.safetensors`
and posts `/v1/load_weights` with the version; the server swaps them between its rounds and
answers when they serve. Rollouts are token-in/token-out: the ids and log-probs the server
sampled are the trajectory's own, so the behaviour log-probs are recorded as on `hf`.

The child ends with the run (`close`, called by the trainer also on errors), with this
process (Linux: it gets SIGTERM when its parent dies), and a server that has died is a
`PolicyError` naming its exit code and the end of its log at the next call, not a hang.

Seeding: serve-policy seeds each chunk of a row with `mix_seed(row seed, chunk)`, and the
in-process HF backend seeds a row once, so at the same `seed` sampled ids differ between
the backends (greedy ones agree); each backend is reproducible on its own.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from envgym.errors import PolicyError

__all__ = ["ServedPolicy"]

_READY = re.compile(r"serving .* on http://127\.0\.0\.1:(\d+)/v1")


class ServedPolicy:
    """A serve-policy child process and the HTTP client of it (`generate`, `score_ids`,
    `chat`, ... are the client's). `load_state_dict(weights, version)` is the weight sync."""

    model = None  # no local module: the trainer syncs weights into it (`sync_weights`)
    takes_versions = True  # `load_state_dict` takes the version (the rollout thread's)

    def __init__(self, path: str, work_dir: Path, *, chunk_tokens: int = 16,
                 max_batch: int = 64, start_timeout: float = 300.0, concurrency: int = 64):
        from envgym.agents.policies.openai import OpenAIPolicy

        self.path, self.work_dir = path, Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.work_dir / "policy_server.log"
        self.version = 0
        self.proc = self._start(chunk_tokens, max_batch)
        try:
            port = self._wait_ready(start_timeout)
            self.url = f"http://127.0.0.1:{port}"
            self.client = OpenAIPolicy(self.url, mode="tokens", tokenizer=path,
                                       concurrency=concurrency, retries=2, backoff=0.2)
        except BaseException:
            self.close()
            raise
        self.name = f"server:{path}"

    # ---- the child -------------------------------------------------------------------------

    def _start(self, chunk_tokens: int, max_batch: int) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "envgym.cli", "serve-policy", f"hf:{self.path}",
               "--host", "127.0.0.1", "--port", "0", "--allow-weight-sync",
               "--chunk-tokens", str(chunk_tokens), "--max-batch", str(max_batch),
               "--shutdown-timeout", "2"]
        log = open(self.log_path, "w")  # noqa: SIM115 - the child writes it while it runs
        try:
            return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent,
                                    env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
        finally:
            log.close()

    def _wait_ready(self, timeout: float) -> int:
        """The port from the child's ready line; an error if it exits or times out first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = _READY.search(self.log_path.read_text(errors="replace"))
            if found:
                return int(found.group(1))
            if self.proc.poll() is not None:
                raise self._dead("did not start")
            time.sleep(0.1)
        raise PolicyError(f"the policy server did not start within {timeout:g} s; "
                          f"its log: {self._tail()}")

    def _dead(self, what: str) -> PolicyError:
        return PolicyError(f"the policy server (pid {self.proc.pid}, {self.log_path}) {what}: "
                           f"exit code {self.proc.returncode}; its log ends: {self._tail()}")

    def _tail(self, chars: int = 800) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:].strip()
        except OSError:
            return "(no log)"

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise self._dead("has exited")

    # ---- the policy ------------------------------------------------------------------------

    def generate(self, prompts: Any, sampling: Any) -> list[Any]:
        self.check_alive()
        try:
            return self.client.generate(prompts, sampling)
        except PolicyError:
            self.check_alive()  # a server that died mid-call says so
            raise

    def load_state_dict(self, state_dict: dict[str, Any], version: int | None = None) -> None:
        """Serve `state_dict` as `version` (default: the next one) from the server's next
        round: written atomically, then loaded; returns once the server serves it."""
        import httpx

        from envgym.agents.policies.server_weights import save_weights

        self.check_alive()
        version = self.version + 1 if version is None else version
        file = save_weights(state_dict, self.work_dir / "served_weights")
        try:
            r = httpx.post(f"{self.url}/v1/load_weights",
                           json={"path": str(file), "version": version}, timeout=600)
        except httpx.HTTPError as e:
            self.check_alive()
            raise PolicyError(f"the policy server did not load the weights: {e}") from e
        if r.status_code != 200:
            raise PolicyError(f"the policy server refused the weights ({r.status_code}): "
                              f"{r.text[:500]}")
        self.version = version

    def __getattr__(self, name: str) -> Any:
        if name in ("client", "proc"):  # not set yet: a failed start
            raise AttributeError(name)
        return getattr(self.client, name)

    def close(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL after 10 s) and reap it."""
        proc = self.__dict__.get("proc")
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __enter__(self) -> ServedPolicy:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the trainer dies (Linux' PR_SET_PDEATHSIG)."""
    if sys.platform.startswith("linux"):
        import ctypes
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
        except OSError:
            pass

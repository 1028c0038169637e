"""Backend selection: probe once per process, cache the instance, say what was chosen.

`auto` means bwrap when its start-up probe passes. Without it, `auto` fails with
`SandboxUnavailable` saying how to install bubblewrap or use docker: model-written programs
must never run unisolated by accident. Running them unisolated is an explicit choice, either
`backend="subprocess"` or `ENVGYM_ALLOW_UNSAFE_SANDBOX=1` (then `auto` falls back with a loud
"not a security boundary" warning). Docker is never picked implicitly: it needs a built image
and an engine, and a user who has both asks for it by name.
"""

from __future__ import annotations

import logging
import os
import threading

from envgym.errors import InvalidConfig, SandboxUnavailable

from .base import Backend, Program

BACKENDS = ("auto", "bwrap", "docker", "subprocess")
log = logging.getLogger("envgym.sandbox")
_cache: dict[str, Backend] = {}
_failures: dict[str, SandboxUnavailable] = {}
_lock = threading.Lock()

__all__ = ["BACKENDS", "UNSAFE_ENV", "Backend", "Program", "available_backends", "get_backend",
           "unsafe_allowed"]


def get_backend(name: str | Backend = "auto") -> Backend:
    """Return a ready backend, raising `SandboxUnavailable` (with the fix) when the one asked
    for cannot run here. Instances and probe failures are cached for the process."""
    if isinstance(name, Backend):
        return name
    if name not in BACKENDS:
        raise InvalidConfig(f"unknown sandbox backend {name!r}; choose one of {BACKENDS}")
    with _lock:
        if name == "auto":
            return _auto()
        return _get(name)


def _get(name: str) -> Backend:
    if name in _cache:
        return _cache[name]
    if name in _failures:
        raise _failures[name]
    try:
        backend = _construct(name)
    except SandboxUnavailable as exc:
        _failures[name] = exc
        raise
    _cache[name] = backend
    return backend


UNSAFE_ENV = "ENVGYM_ALLOW_UNSAFE_SANDBOX"


def unsafe_allowed() -> bool:
    """Whether the user opted in to unisolated execution through the environment."""
    return os.environ.get(UNSAFE_ENV, "").strip().lower() in ("1", "true", "yes")


def _auto() -> Backend:
    try:
        return _get("bwrap")
    except SandboxUnavailable as exc:
        if not unsafe_allowed():
            raise SandboxUnavailable(
                f"no isolating sandbox backend: {exc} Install bubblewrap (`apt-get install "
                "bubblewrap`), or pass backend='docker' (needs a Docker engine and the image "
                "from sandbox/Dockerfile). To run untrusted programs WITHOUT isolation anyway, "
                f"pass backend='subprocess' or set {UNSAFE_ENV}=1.") from exc
        log.warning("envgym.sandbox: bubblewrap is unavailable (%s); %s=1, so falling back to "
                    "the subprocess backend.", exc, UNSAFE_ENV)
        return _get("subprocess")


def _construct(name: str) -> Backend:
    if name == "bwrap":
        from .bwrap import BwrapBackend

        return BwrapBackend()
    if name == "docker":
        from .docker_ import DockerBackend

        return DockerBackend()
    from .subprocess_ import SubprocessBackend

    return SubprocessBackend()


def available_backends() -> dict[str, str]:
    """Name -> "ok" or the reason it cannot run; used by the benchmark and `doctor`-style
    reporting. Probing Docker is skipped quickly when the SDK is not installed."""
    status = {}
    for name in BACKENDS[1:]:
        try:
            get_backend(name)
            status[name] = "ok"
        except SandboxUnavailable as exc:
            status[name] = str(exc)
    return status


def reset_backends() -> None:
    """Forget cached backends (tests; after installing bubblewrap in a running process)."""
    with _lock:
        for backend in _cache.values():
            backend.close()
        _cache.clear()
        _failures.clear()

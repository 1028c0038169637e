"""Where the interpreters and compilers live, and the command line for each language.

The sandboxed Python is the system one under /usr when there is one, so the bwrap backend only
needs /usr read-only and nothing under /root (where pyenv and secrets live) is mounted.
`ENVGYM_SANDBOX_PYTHON` overrides it; a Python outside /usr gets its own prefix bound.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from dataclasses import dataclass

from envgym.errors import InvalidConfig, SandboxUnavailable

LANGUAGES = ("python", "cpp")
_ALIASES = {"python": "python", "python3": "python", "py": "python", "cpp": "cpp",
            "c++": "cpp", "cpp17": "cpp", "cxx": "cpp"}
SOURCE_NAME = {"python": "main.py", "cpp": "main.cpp"}
BINARY_NAME = "a.out"
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"


def normalise_language(language: str) -> str:
    """Accept the usual spellings ("py", "python3", "c++"); reject everything else early."""
    lang = _ALIASES.get(language.strip().lower())
    if lang is None:
        raise InvalidConfig(f"language {language!r} is not supported; use one of {LANGUAGES}")
    return lang


@dataclass(frozen=True)
class Python:
    executable: str
    prefix: str  # the directory tree that must be visible for it to start


@functools.lru_cache(maxsize=1)
def python() -> Python:
    override = os.environ.get("ENVGYM_SANDBOX_PYTHON")
    candidates = [override] if override else ["/usr/bin/python3", "/usr/local/bin/python3"]
    for path in candidates:
        if path and os.access(path, os.X_OK):
            real = os.path.realpath(path)
            return Python(real, os.path.dirname(os.path.dirname(real)))
    real = os.path.realpath(sys.executable)
    return Python(real, sys.base_prefix)


@functools.lru_cache(maxsize=1)
def gxx() -> str:
    path = shutil.which("g++")
    if path is None:
        raise SandboxUnavailable("C++ needs g++; install it with `apt-get install g++`.")
    return os.path.realpath(path)


def run_argv(language: str) -> list[str]:
    """The program's command line, relative to the sandbox work dir."""
    if language == "python":
        return [python().executable, "-I", SOURCE_NAME["python"]]
    return ["./" + BINARY_NAME]


def compile_argv() -> list[str]:
    return [gxx(), "-std=c++17", "-O2", "-pipe", "-o", BINARY_NAME, SOURCE_NAME["cpp"]]


def sandbox_env(home: str, tmp: str) -> dict[str, str]:
    """A scrubbed environment: nothing from the host leaks in, BLAS stays single-threaded
    (RLIMIT_AS + many BLAS threads fails at start-up, SandboxFusion PR #45)."""
    return {"PATH": SANDBOX_PATH, "HOME": home, "TMPDIR": tmp, "LANG": "C.UTF-8",
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

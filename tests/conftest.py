"""Shared test setup: skip `gpu` / `docker` tests where the hardware or engine is absent."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _has_gpu() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


def _has_docker() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def pytest_report_header(config):
    from tests.samples import REAL, REAL_ENV

    return (f"real public samples: {REAL}" if REAL is not None else
            f"real public samples: none (set {REAL_ENV}=DIR to run those tests)")


def pytest_collection_modifyitems(config, items):
    need_gpu = any("gpu" in item.keywords for item in items)
    need_docker = any("docker" in item.keywords for item in items)
    gpu = _has_gpu() if need_gpu else False
    docker = _has_docker() if need_docker else False
    for item in items:
        if "gpu" in item.keywords and not gpu:
            item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU"))
        if "docker" in item.keywords and not docker:
            item.add_marker(pytest.mark.skip(reason="needs a Docker engine"))


def free_port() -> int:
    """A loopback port free right now: fixed ports collide when two suites run side by side
    on one machine (a torchrun rendezvous then fails with EADDRINUSE)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

"""Shared fixtures: one tiny model per session, built offline in seconds."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    from envgym.agents.tiny import build_tiny_model
    torch.set_num_threads(1)  # the CI box is shared; oversubscription is 5x slower
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), include_envs=False)


@pytest.fixture(scope="session")
def tiny_policy(tiny_dir):
    from envgym.policy import load_policy
    return load_policy(f"hf:{tiny_dir}", device="cpu", threads=1)

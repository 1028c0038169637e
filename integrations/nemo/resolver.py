"""Resolves `nemo:URL` (an `envgym.resolvers` entry point): a running NeMo Gym resources
server; the task rows come as `tasks=FILE.jsonl`."""

from __future__ import annotations

from envgym.integrations.imported import ADVERSARIES

from envgym.registration import EnvSpec

__all__ = ["ID", "PREFIX", "resolve"]

ID = "envgym/NemoGym-v0"
PREFIX = "nemo:"
ENTRY_POINT = "envgym.integrations.nemo.env:NemoEnv"


def resolve(env_id: str) -> EnvSpec | None:
    if env_id == ID:
        return EnvSpec(ID, ENTRY_POINT, scripted=dict(ADVERSARIES),
                       description="a NeMo Gym resources server (url=, tasks=)")
    if not env_id.startswith(PREFIX) or not env_id[len(PREFIX):].strip():
        return None
    url = env_id[len(PREFIX):]
    return EnvSpec(ID, ENTRY_POINT, kwargs={"url": url}, scripted=dict(ADVERSARIES),
                   description=f"the NeMo Gym resources server at {url}")

"""Resolves `verifiers:ID` (an `envgym.resolvers` entry point): an installed verifiers
taskset, by the module name verifiers itself loads it by."""

from __future__ import annotations

from envgym.integrations.imported import ADVERSARIES

from envgym.registration import EnvSpec

__all__ = ["ID", "PREFIX", "resolve"]

ID = "envgym/Verifiers-v0"
PREFIX = "verifiers:"
ENTRY_POINT = "envgym.integrations.verifiers.env:VerifiersEnv"


def resolve(env_id: str) -> EnvSpec | None:
    if env_id == ID:
        return EnvSpec(ID, ENTRY_POINT, scripted=dict(ADVERSARIES),
                       description="an installed verifiers taskset (taskset=)")
    if not env_id.startswith(PREFIX) or not env_id[len(PREFIX):].strip():
        return None
    taskset = env_id[len(PREFIX):]
    return EnvSpec(ID, ENTRY_POINT, kwargs={"taskset": taskset}, scripted=dict(ADVERSARIES),
                   description=f"the verifiers taskset {taskset}")

"""Resolves `openenv:URL` and `envgym/OpenEnv-v0` (an `envgym.resolvers` entry point).

Neither is in the registry: a URL is not an id one can list, and the wrapper cannot be made
without a server, so `envgym list` and the checker's sweep over registered ids skip it.
"""

from __future__ import annotations

from envgym.errors import EnvGymError
from envgym.registration import EnvSpec

__all__ = ["ID", "PREFIX", "RemoteBaselines", "resolve"]

ID = "envgym/OpenEnv-v0"
PREFIX = "openenv:"
ENTRY_POINT = "envgym.integrations.openenv.client:OpenEnvEnv"


class ScriptedOverWire(EnvGymError):
    """A scripted baseline was asked to run against a remote environment."""


class RemoteBaselines(dict):
    """The scripted baselines of a remote environment: every name answers with the reason
    none can run (they read the environment's state, which stays on the server)."""

    remote = True  # `envgym check` says why no generic adversary plays (envgym.adversaries)

    def __init__(self, where: str):
        super().__init__()
        self.where = where

    def __contains__(self, name: object) -> bool:
        return True

    def __getitem__(self, name: str) -> str:
        raise ScriptedOverWire(
            f"scripted:{name} cannot run on {self.where}: scripted baselines read the "
            "environment's internal state (the task, the evidence, its settings), which an "
            "OpenEnv session does not expose. Run the baseline in-process (--env ENV_ID), or "
            "use a model policy (hf:, openai:, vllm:) through the remote environment.")


def resolve(env_id: str) -> EnvSpec | None:
    if env_id == ID:
        return EnvSpec(ID, ENTRY_POINT, description="any OpenEnv server (pass url=)",
                       scripted=RemoteBaselines("an OpenEnv server"))
    if env_id.startswith(PREFIX):
        url = env_id[len(PREFIX):]
        return EnvSpec(ID, ENTRY_POINT, description=f"the OpenEnv server at {url}",
                       kwargs={"url": url}, scripted=RemoteBaselines(url))
    return None

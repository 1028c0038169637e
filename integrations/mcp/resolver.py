"""Resolves `mcp:CMD_OR_URL` (an `envgym.resolvers` entry point): the tool server is in the
id; the tasks and the verifier come as arguments (`tasks=`, `verifier=`)."""

from __future__ import annotations

from envgym.integrations.imported import ADVERSARIES

from envgym.registration import EnvSpec

__all__ = ["ID", "PREFIX", "resolve"]

ID = "envgym/Mcp-v0"
PREFIX = "mcp:"


def resolve(env_id: str) -> EnvSpec | None:
    if env_id == ID:
        return EnvSpec(ID, "envgym.integrations.mcp.env:McpTaskEnv", scripted=dict(ADVERSARIES),
                       description="an MCP tool server with tasks=FILE and verifier=FN (server=)")
    if not env_id.startswith(PREFIX) or not env_id[len(PREFIX):].strip():
        return None
    target = env_id[len(PREFIX):]
    return EnvSpec(ID, "envgym.integrations.mcp.env:McpTaskEnv", kwargs={"server": target},
                   scripted=dict(ADVERSARIES), description=f"the MCP tool server {target}")

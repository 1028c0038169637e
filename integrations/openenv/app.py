"""`uvicorn envgym.integrations.openenv.app:app`: the server a published image runs.

The environment comes from the process environment, as container images are configured:
`ENVGYM_ENV_ID` (required), `ENVGYM_ENV_ARGS` (a JSON object of `make` arguments),
`ENVGYM_MAX_SESSIONS` and `ENVGYM_IDLE_TIMEOUT`.
"""

from __future__ import annotations

import json
import os

from envgym.errors import InvalidConfig
from envgym.integrations.openenv.server import ServerConfig, build_app


def config_from_environ(environ: dict[str, str] | None = None) -> ServerConfig:
    env = os.environ if environ is None else environ
    if not env.get("ENVGYM_ENV_ID"):
        raise InvalidConfig("set ENVGYM_ENV_ID to the environment to serve, e.g. envgym/TimeSeries-v0")
    try:
        kwargs = json.loads(env.get("ENVGYM_ENV_ARGS") or "{}")
    except json.JSONDecodeError as e:
        raise InvalidConfig(f"ENVGYM_ENV_ARGS is not JSON: {e}") from e
    if not isinstance(kwargs, dict):
        raise InvalidConfig("ENVGYM_ENV_ARGS must be a JSON object of make() arguments")
    return ServerConfig(env["ENVGYM_ENV_ID"], kwargs,
                        max_sessions=int(env.get("ENVGYM_MAX_SESSIONS", "32")),
                        idle_timeout=float(env.get("ENVGYM_IDLE_TIMEOUT", "300")))


def __getattr__(name: str):
    """`app` is built on first access, so importing this module never builds an environment."""
    if name == "app":
        app = build_app(config_from_environ())
        globals()["app"] = app
        return app
    raise AttributeError(name)

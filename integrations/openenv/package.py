"""The files that publish an environment as OpenEnv environments are published.

`write_package(env_id, out)` writes `openenv.yaml` (OpenEnv's manifest: spec version 1, a
FastAPI runtime, the app to run and its port), a `Dockerfile` whose image runs
`envgym serve-env` for that environment, and a README that becomes the Space's card. Files
are written atomically (temp file, then rename) so a half-written manifest is never left.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

__all__ = ["manifest", "write_package"]

PORT = 8000


def _name(env_id: str) -> str:
    """OpenEnv names are snake-case and end in `_env`: `envgym/TimeSeries-v0` → `timeseries_v0_env`."""
    tail = env_id.split("/")[-1]
    return re.sub(r"[^a-z0-9]+", "_", tail.lower()).strip("_") + "_env"


def manifest(env_id: str, description: str) -> str:
    lines = {
        "spec_version": 1,
        "name": _name(env_id),
        "type": "space",
        "runtime": "fastapi",
        "app": "envgym.integrations.openenv.app:app",
        "port": PORT,
        "description": description,
        "envgym_env_id": env_id,
    }
    return "".join(f"{k}: {json.dumps(v)}\n" for k, v in lines.items())  # JSON scalars are YAML


def plugin_requirement(env_id: str) -> str | None:
    """The pip requirement of the distribution that registers `env_id`, when it is not envgym
    itself (a plugin): its name and installed version, found from the entry point's module."""
    from importlib.metadata import packages_distributions, version

    import envgym
    from envgym.errors import InvalidConfig

    entry = envgym.spec(env_id).entry_point
    module = entry.partition(":")[0] if isinstance(entry, str) else entry.__module__
    top = module.split(".")[0]
    if top == "envgym":
        return None
    dists = packages_distributions().get(top, [])
    if not dists:
        raise InvalidConfig(
            f"{env_id} comes from module {module!r}, which no installed distribution provides, "
            "so an image could not install it: make it a pip-installable package (with an "
            "`envgym.environments` entry point) and install it, then package again.")
    return f"{dists[0]}=={version(dists[0])}"


def _plugin_lines(requirement: str | None) -> str:
    if requirement is None:
        return ""
    return (f"# The plugin that registers this environment (a wheel or path works too:\n"
            f"# --build-arg PLUGIN_SPEC=./dist/plugin.whl after COPYing it in).\n"
            f"ARG PLUGIN_SPEC=\"{requirement}\"\n"
            f"RUN pip install --no-cache-dir \"$PLUGIN_SPEC\" \\\n"
            f"    && python -c \"import envgym; envgym.spec('$ENVGYM_ENV_ID')\"\n")


def dockerfile(env_id: str, env_kwargs: dict[str, Any]) -> str:
    args = json.dumps(json.dumps(env_kwargs, sort_keys=True))
    plugin = _plugin_lines(plugin_requirement(env_id))
    return f"""\
# {env_id} as an OpenEnv environment (written by `envgym serve-env --package`).
# Build: docker build -t {_name(env_id).replace('_', '-')} .   (ENVGYM_SPEC picks the envgym to
# install, e.g. --build-arg ENVGYM_SPEC=git+https://example.org/envgym.git or a wheel copied in.)
FROM python:3.11-slim
ARG ENVGYM_SPEC="envgym[openenv]"
RUN apt-get update && apt-get install -y --no-install-recommends curl g++ bubblewrap \\
    && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir torch --index-url https://download.pytorch.org/whl/cpu \\
    && pip install --no-cache-dir "$ENVGYM_SPEC"
ENV ENVGYM_ENV_ID="{env_id}" ENVGYM_ENV_ARGS={args} ENVGYM_MAX_SESSIONS=32 \\
    ENVGYM_IDLE_TIMEOUT=300 HF_HUB_OFFLINE=1
{plugin}RUN useradd --create-home envgym
USER envgym
EXPOSE {PORT}
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \\
    CMD curl -s -o /dev/null -w "%{{http_code}}" http://localhost:{PORT}/health \\
        | grep -qE "200|503" || exit 1
# (/health answers 503 while every session slot is taken: full is not unhealthy.)
# Inside the container the server must listen on every interface; publish the port on the
# host's loopback (docker run -p 127.0.0.1:{PORT}:{PORT} ...) unless you mean to expose it.
CMD ["uvicorn", "envgym.integrations.openenv.app:app", "--host", "0.0.0.0", "--port", "{PORT}", \\
     "--ws-ping-interval", "20", "--ws-ping-timeout", "20"]
"""


def readme(env_id: str, description: str) -> str:
    return f"""---
title: {env_id}
tags: [openenv, envgym]
sdk: docker
app_port: {PORT}
---
# {env_id}

{description}

An envgym environment served over OpenEnv. Actions are `{{"content": TEXT}}` (multi-agent:
`{{"actions": {{AGENT: TEXT}}}}`); observations carry the new chat messages, the reward and its
named components, `terminated` / `truncated` and envgym's `info`. Tool schemas are on `/schema`.

    envgym serve-env {env_id}                      # locally, on 127.0.0.1:8000
    envgym eval --env openenv:http://127.0.0.1:8000 --policy hf:MODEL
"""


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_package(env_id: str, out: str | os.PathLike[str],
                  env_kwargs: dict[str, Any] | None = None) -> list[Path]:
    """Write `openenv.yaml`, `Dockerfile` and `README.md` for `env_id` into `out`."""
    import envgym

    spec = envgym.spec(env_id)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = {"openenv.yaml": manifest(env_id, spec.description or env_id),
             "Dockerfile": dockerfile(env_id, dict(env_kwargs or {})),
             "README.md": readme(env_id, spec.description or env_id)}
    for name, text in files.items():
        _atomic_write(out / name, text)
    return [out / name for name in files]

"""Is a model name loadable here? Answered in about a second, before anything loads.

`transformers.from_pretrained("Qwen/Qwen2.5-0.5B-Instrct")` on a machine without network
retries the Hub for most of a minute and then prints a hundred-line traceback; with
`HF_HUB_OFFLINE=1` it fails fast but still as a traceback. A CLI that knows the answer in
advance can say it in one line: the name is a local directory, a copy in the Hugging Face
cache, or a repository the (reachable) Hub has, or it is none of these.
"""

from __future__ import annotations

import os
from pathlib import Path

from envgym.errors import PolicyError

__all__ = ["check_model_source"]

PROBE_TIMEOUT_S = 3.0
"""How long the one Hub request may take before the Hub counts as unreachable."""


def check_model_source(name: str, *, what: str = "model") -> None:
    """Raise `PolicyError` (one line) unless `name` can be loaded: a local path, a cached
    Hub copy, or (online) a repository on the Hub. Never downloads anything."""
    if Path(name).expanduser().exists():
        return
    if name.startswith((".", "/", "~")) or name.count("/") > 1 or not name.strip():
        raise PolicyError(f"{what} {name!r} does not exist (not a local directory, and not a "
                          "Hub name like org/model)")
    if _cached(name):
        return
    head = (f"{what} {name!r} is not a local directory and not in the Hugging Face cache "
            f"({_cache_dir()})")
    if _offline():
        raise PolicyError(f"{head}, and HF_HUB_OFFLINE is set: give a local path, or download "
                          f"it first (hf download {name})")
    status = _hub_status(name)
    if status is None:
        raise PolicyError(f"{head}, and the Hub ({_endpoint()}) cannot be reached: give a local "
                          "path, or check the network (HF_HUB_OFFLINE=1 skips this check)")
    if status in (401, 403, 404):
        raise PolicyError(f"{head}, and the Hub has no such repository (HTTP {status}; a private "
                          "or gated one needs HF_TOKEN): check the spelling")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def _cache_dir() -> str:
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def _cached(name: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    try:
        return any(isinstance(try_to_load_from_cache(name, f), str)
                   for f in ("config.json", "tokenizer_config.json"))
    except ValueError:  # not a valid repo id
        return False


def _hub_status(name: str) -> int | None:
    """The Hub's HTTP status for the model's API page; None when it cannot be reached."""
    import httpx

    headers = {}
    if token := os.environ.get("HF_TOKEN"):
        headers["authorization"] = f"Bearer {token}"
    try:
        return httpx.get(f"{_endpoint()}/api/models/{name}", headers=headers,
                         timeout=PROBE_TIMEOUT_S, follow_redirects=True).status_code
    except httpx.HTTPError:
        return None

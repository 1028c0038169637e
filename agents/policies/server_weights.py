"""`serve-policy --allow-weight-sync`: a trainer pushes new weights into the served policy.

`POST /v1/load_weights {"path": FILE_OR_DIR, "version": V}` reads a safetensors state dict
(`FILE`, or `DIR/model.safetensors`; the trainer writes it atomically, `save_weights`) and
loads it into the served HF policy as version V. What it guarantees:

* **Between rounds, never mid-round.** The load is a job of the scheduler
  (`server_engine.Engine.call`): the round in flight finishes with the old weights, the load
  runs, the next round samples with the new ones. Every chunk of every row is sampled by one
  version.
* **Rows in flight keep going.** A row that spans a load is not dropped or restarted: its
  later chunks are sampled by the new version, and the row reports every version that
  sampled part of it, in order (`envgym.policy_versions` of its choice; `policy_version` is
  the newest of them). The trainer never has a row in flight at a load (it loads between
  rollouts or between batched turns), so its rows carry exactly one version.
* **Checked before anything changes.** A missing file, an unreadable one, an unknown or
  missing parameter name or a shape mismatch is a 400 naming the reason, and the old weights
  and version stay served. Values are cast to the served model's dtype and device.
* **Opt-in and loopback only.** The route exists only with `--allow-weight-sync`, the server
  then refuses to bind anything but a loopback address, and a request from another address is
  a 403: whoever can load weights decides what the server says.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

from envgym.agents.policies.server_params import APIError

__all__ = ["WEIGHTS_FILE", "check_loopback", "read_weights", "save_weights"]

WEIGHTS_FILE = "model.safetensors"


def is_loopback(host: str) -> bool:
    """Whether `host` names only this machine ("localhost", 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_loopback(host: str) -> None:
    """Refuse to serve the weight-sync route on an address other machines can reach."""
    if not is_loopback(host):
        raise ValueError(f"--allow-weight-sync serves only on a loopback address, not {host!r}: "
                         "anyone who can reach the route can replace the served weights")


def parse_load(body: dict[str, Any]) -> tuple[Path, int]:
    """(the weights file, the version) of a `/v1/load_weights` body; a 400 otherwise."""
    path, version = body.get("path"), body.get("version")
    if not isinstance(path, str) or not path:
        raise APIError("path must be a non-empty string (a safetensors file or its folder)",
                       "path")
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise APIError("version must be an integer >= 0", "version")
    where = Path(path)
    file = where / WEIGHTS_FILE if where.is_dir() else where
    if not file.is_file():
        raise APIError(f"no weights at {file}", "path")
    return file, version


def read_weights(file: Path, model: Any) -> dict[str, Any]:
    """The state dict in `file`, checked against `model` (names and shapes) and cast to its
    dtypes and device; a 400 with the reason if it does not fit (nothing is loaded)."""
    from safetensors.torch import load_file

    from envgym.agents.checkpoint import tied_aliases

    try:
        state = load_file(str(file))
    except Exception as e:  # noqa: BLE001 - safetensors' own error type varies by version
        raise APIError(f"cannot read {file} as safetensors: {e}", "path") from None
    own = model.state_dict()
    unknown = sorted(set(state) - set(own))
    missing = sorted(set(own) - set(state) - set(tied_aliases(model)))
    if unknown or missing:
        raise APIError(f"{file} does not fit the served model: unknown {unknown[:5]}, "
                       f"missing {missing[:5]}", "path")
    wrong = [f"{k}: {tuple(v.shape)} != {tuple(own[k].shape)}" for k, v in state.items()
             if tuple(v.shape) != tuple(own[k].shape)]
    if wrong:
        raise APIError(f"{file} does not fit the served model (shape): {wrong[:3]}", "path")
    return {k: v.to(dtype=own[k].dtype, device=own[k].device) for k, v in state.items()}


def save_weights(state: dict[str, Any], folder: Path, model: Any | None = None) -> Path:
    """Write `state` as `folder/model.safetensors` atomically (a temporary file, then a
    rename): the server never reads half a file. Tied aliases of `model` are left out
    (safetensors refuses shared storage; the server's model ties them again)."""
    from safetensors.torch import save_file

    from envgym.agents.checkpoint import tied_aliases

    aliases = set(tied_aliases(model)) if model is not None else set()
    folder.mkdir(parents=True, exist_ok=True)
    plain = {k: v.detach().to("cpu").contiguous().clone() for k, v in state.items()
             if k not in aliases}
    tmp = folder / f".{WEIGHTS_FILE}.{os.getpid()}.tmp"
    save_file(plain, str(tmp))
    os.replace(tmp, folder / WEIGHTS_FILE)
    return folder / WEIGHTS_FILE

"""Atomic, complete training checkpoints: a killed run resumes exactly where it stopped.

A checkpoint holds everything the next step depends on: model and optimizer and scheduler
states, every RNG (python, numpy, torch CPU and CUDA), the data cursor and the step. It is
written into a temporary directory that is renamed into place, and the `latest` pointer is
replaced atomically after it, so a kill at any moment leaves the previous checkpoint intact.

Under FSDP the model and optimizer states are gathered to full tensors (keyed like the plain
model's), so a checkpoint does not depend on the number of ranks. Every rank's RNGs and
minibatch shuffle are gathered too (ranks hold different numbers of sequences, so their
shuffle generators drift apart): a resumed multi-rank run is bit-identical as well.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

__all__ = ["load_latest", "load_model_state", "load_optimizer_state", "model_state",
           "optimizer_state", "restore_rng", "rng_state", "save_checkpoint", "tied_aliases"]


def rng_state() -> dict[str, Any]:
    state = {"python": random.getstate(), "numpy": np.random.get_state(),
             "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def save_checkpoint(root: Path, step: int, state: dict[str, Any], keep: int = 2) -> Path:
    """Write `state` (tensors, dicts) as `root/step_{step:07d}/state.pt`; keep the newest `keep`."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step_{step:07d}"
    tmp = root / f".tmp_step_{step:07d}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    with open(tmp / "state.pt", "wb") as f:
        torch.save({**state, "step": step, "rng": rng_state()}, f)
        f.flush()
        os.fsync(f.fileno())
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    pointer = root / ".latest.tmp"
    _fsync_write(pointer, final.name.encode())
    os.replace(pointer, root / "latest")
    for old in sorted(root.glob("step_*"))[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def load_latest(root: Path) -> dict[str, Any] | None:
    """The newest complete checkpoint's state (RNG not yet restored), or None."""
    pointer = root / "latest"
    candidates = []
    if pointer.is_file():
        candidates.append(root / pointer.read_text().strip())
    candidates += sorted(root.glob("step_*"), reverse=True)
    for path in candidates:
        if (path / "state.pt").is_file():
            return torch.load(path / "state.pt", map_location="cpu", weights_only=False)
    return None


# ---- model and optimizer states, whatever the wrapper -------------------------------------

def _fsdp(model: Any) -> bool:
    from envgym.agents.fsdp import is_fsdp
    return is_fsdp(model)


def _options(**kw: Any) -> Any:
    from torch.distributed.checkpoint.state_dict import StateDictOptions
    return StateDictOptions(full_state_dict=True, **kw)


def _strip(state: dict[str, Any], model: Any) -> dict[str, Any]:
    """FSDP names parameters from the `LogprobModel` root (`module.` + the HF name) and
    gathers tied parameters (embeddings = head) as separate copies: keep one, as the plain
    state dict's storage sharing does when saved."""
    aliases = tied_aliases(model)
    return {k.removeprefix("module."): v for k, v in state.items()
            if k.removeprefix("module.") not in aliases}


def tied_aliases(model: Any) -> dict[str, str]:
    """{alias: first name} for parameters registered under several names (tied weights)."""
    from envgym.agents.learner import unwrap

    first: dict[int, str] = {}
    out = {}
    for name, p in unwrap(model).named_parameters(remove_duplicate=False):
        if id(p) in first:
            out[name] = first[id(p)]
        else:
            first[id(p)] = name
    return out


def model_state(model: Any, every_rank: bool = False) -> dict[str, torch.Tensor]:
    """The full state dict with the causal LM's own names (what `save_pretrained` and a
    rollout engine load). Under FSDP this gathers the shards: a collective that every rank
    must call; the result is on CPU and, unless `every_rank`, only rank 0 gets it."""
    if not _fsdp(model):
        from envgym.agents.learner import unwrap
        return unwrap(model).state_dict()
    from torch.distributed.checkpoint.state_dict import get_model_state_dict
    state = get_model_state_dict(model, options=_options(cpu_offload=not every_rank))
    if every_rank:
        state = {k: v.cpu() for k, v in state.items()}
    return _strip(state, model)


def optimizer_state(model: Any, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """The optimizer's full state (FSDP: gathered to rank 0, keyed by parameter name)."""
    if not _fsdp(model):
        return optimizer.state_dict()
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict
    return get_optimizer_state_dict(model, optimizer, options=_options(cpu_offload=True))


def load_model_state(model: Any, state: dict[str, torch.Tensor]) -> None:
    """Inverse of `model_state`; under FSDP each rank keeps its shard of the full tensors."""
    if not _fsdp(model):
        from envgym.agents.learner import unwrap
        unwrap(model).load_state_dict(state)
        return
    from torch.distributed.checkpoint.state_dict import set_model_state_dict
    state = {**state, **{a: state[src] for a, src in tied_aliases(model).items() if src in state}}
    set_model_state_dict(model, {f"module.{k}": v for k, v in state.items()}, options=_options())


def load_optimizer_state(model: Any, optimizer: torch.optim.Optimizer, state: dict[str, Any]
                         ) -> None:
    if not _fsdp(model):
        optimizer.load_state_dict(state)
        return
    from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict
    set_optimizer_state_dict(model, optimizer, state, options=_options())

"""What `envgym train` checks and writes in its output directory before and around the loop.

Each check runs before any model work, so a mistake costs a second, not an SFT run:
  - `--resume` needs a checkpoint of this config;
  - a directory that already holds a run needs `--resume` or `--overwrite` (else the new run
    would interleave its metrics, TensorBoard events and checkpoints with the old one's);
  - `[log] wandb = true` needs wandb installed.
The resolved config is saved as `train_config.json`, which `envgym train` reads back.

Ctrl-C (`StopOnInterrupt`) stops at the end of the current step, so the checkpoint it saves is
one the loop would have written itself and `--resume` continues exactly; a second Ctrl-C quits
at once.
"""

from __future__ import annotations

import importlib.util
import shutil
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from envgym.agents.checkpoint import load_latest
from envgym.agents.config import TrainConfig
from envgym.errors import EnvGymError, InvalidConfig

__all__ = ["CONFIG_FILE", "StopOnInterrupt", "TrainingInterrupted", "prepare_output",
           "zero_signal_warning"]

CONFIG_FILE = "train_config.json"
RUN_FILES = ("metrics.jsonl", "tb", "checkpoints", "final", "trajectories", CONFIG_FILE,
             "wandb")
"""What `--overwrite` removes; the tiny model and the keyed SFT warm start stay (reusable)."""
ZERO_SIGNAL_STEPS = 3
"""Consecutive steps without any non-zero advantage before the trainer says so."""


class TrainingInterrupted(EnvGymError):
    """Ctrl-C: the run stopped after a step and saved a checkpoint to resume from."""


def holds_run(out: Path) -> bool:
    return (out / "metrics.jsonl").is_file() or any((out / "checkpoints").glob("step_*"))


def prepare_output(cfg: TrainConfig, resume: bool, overwrite: bool, rank: int
                   ) -> dict[str, Any] | None:
    """Run the start-up checks; returns the checkpoint state to resume from (or None)."""
    out = cfg.output_dir
    if resume and overwrite:
        raise InvalidConfig("--resume and --overwrite contradict each other: choose one")
    if cfg.log.wandb and importlib.util.find_spec("wandb") is None:
        raise InvalidConfig("[log] wandb = true, but wandb is not installed: pip install wandb, "
                            "or set wandb = false")
    state = None
    if resume:
        state = load_latest(out / "checkpoints")
        if state is None:
            raise InvalidConfig(f"--resume: no checkpoint in {out / 'checkpoints'}")
        if state["config_digest"] != cfg.digest():
            raise InvalidConfig("--resume: the config changed since the checkpoint "
                                f"({state['config_digest']} != {cfg.digest()})")
    elif holds_run(out) and not overwrite:
        raise InvalidConfig(f"{out} already holds a run: pass --resume to continue it or "
                            "--overwrite to replace it (or set another output_dir)")
    if rank == 0:
        if overwrite:
            _overwrite(out)
        _writable(out)
        (out / CONFIG_FILE).write_text(cfg.model_dump_json(indent=2) + "\n")
    return state


def _overwrite(out: Path) -> list[str]:
    """Delete the previous run's files, saying on stderr which (and what stays)."""
    doomed = [out / name for name in RUN_FILES if (out / name).exists()]
    doomed += sorted(out.glob("eval_*_step*.jsonl"))
    if doomed:
        kept = sorted(p.name for p in out.iterdir() if p not in doomed) if out.is_dir() else []
        print(f"--overwrite: deleting {', '.join(p.name for p in doomed)} from {out}"
              + (f" (keeping {', '.join(kept)})" if kept else ""), file=sys.stderr)
    for path in doomed:
        _remove(path)
    return [p.name for p in doomed]


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def _writable(out: Path) -> None:
    """One line naming the folder, instead of a traceback at the first file written."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".envgym-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise InvalidConfig(f"cannot write to output_dir {out}: {e.strerror}") from None


def zero_signal_warning(first: int, last: int) -> str:
    return (f"warning: steps {first}-{last} had no learning signal: in every group all "
            "rollouts got the same reward (adv/zero_fraction 1.0), so the updates were zero. "
            "Likely fixes: a warm start (model.warm_start = \"sft\") so some rollouts succeed, "
            "rollout.group_size >= 2, or a higher rollout.temperature.")


class StopOnInterrupt:
    """While active (main thread only), the first SIGINT asks the loop to stop after the
    current step; the second raises KeyboardInterrupt as usual."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def __enter__(self) -> StopOnInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\ninterrupted: finishing this step and saving a checkpoint "
              "(Ctrl-C again to quit without saving)", file=sys.stderr, flush=True)

    def stop(self, world: int) -> bool:
        """Whether any rank was interrupted (all ranks stop at the same step)."""
        if world == 1:
            return self.requested
        import torch

        flag = torch.tensor([float(self.requested)])
        torch.distributed.all_reduce(flag)
        return bool(flag.item())

"""A finished (or running) training run's run-level state, for evaluation.

Debate-v0's "dynamic" mode reads the IRT abilities the run learnt (`envgym.runstate`); an
evaluation that builds a fresh IRT per episode only sees the difficulty prior, so its mode is
a level threshold, not the training mode. `envgym eval ... --run DIR` loads the state saved in
DIR's newest checkpoint and binds every evaluation environment to it, read-only: evaluation
never calls `update_run`, so the held-out episodes do not teach the IRT.
"""

from __future__ import annotations

from pathlib import Path

from envgym.agents.checkpoint import load_latest
from envgym.errors import InvalidConfig
from envgym.runstate import RunState

__all__ = ["load_run_state"]


def load_run_state(run_dir: str | Path) -> RunState:
    """The run state of `run_dir`'s newest complete checkpoint (`checkpoints/step_*`)."""
    root = Path(run_dir)
    ckpts = root / "checkpoints" if (root / "checkpoints").is_dir() else root
    state = load_latest(ckpts) if ckpts.is_dir() else None
    if state is None:
        raise InvalidConfig(f"--run {run_dir}: no checkpoint with a state.pt under {ckpts}; "
                            "pass the output_dir of an `envgym train` run.")
    if "run_state" not in state:
        raise InvalidConfig(f"--run {run_dir}: its checkpoint holds no run state (written by "
                            "an older envgym); retrain or evaluate without --run.")
    run = RunState()
    run.load_state_dict(state["run_state"])
    return run

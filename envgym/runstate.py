"""Run-level state: what must outlive one environment instance (DESIGN "Training structure").

The rollout engine builds a fresh environment for every episode, so anything a method needs
across episodes and steps — IRT abilities, reward histories, the training step a bonus
decays with — cannot live in an environment. It lives in one `RunState` owned by the run
(the trainer creates it, saves it in every checkpoint and restores it on resume).

The hook, in two optional parts an environment class may define:

* `env.bind_run(run: RunState) -> None` — the engine's factory (`env_factory`) calls it on
  every environment it makes, before `reset`. The environment *reads* `run.step` and its own
  entry `run.state[key]` at reset; it never writes run state while episodes run (they run
  concurrently in threads), so every episode of a step sees the same state and a resumed run
  replays exactly.
* `EnvClass.update_run(run: RunState, trajectories: list[Trajectory]) -> None` — a
  classmethod the trainer calls once per environment after each step's rollouts
  (`update_from`), with that environment's finished trajectories; this is where the state
  learns from episodes.

`run.step` is the training step being rolled out (0 before training, 1 for the first step).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["RunState", "env_class", "env_factory", "update_from"]


class RunState:
    """The training step and each environment's run-level state, keyed by a name it picks."""

    def __init__(self, step: int = 0):
        self.step = step
        self.state: dict[str, Any] = {}
        self._lock = threading.Lock()

    def setdefault(self, key: str, factory: Callable[[], Any]) -> Any:
        """`state[key]`, created by `factory()` the first time. Environments are made in
        worker threads, so the creation is locked; after it, episodes only read."""
        with self._lock:
            if key not in self.state:
                self.state[key] = factory()
            return self.state[key]

    def __deepcopy__(self, memo: dict[int, Any]) -> RunState:
        """The run is one: a copied (forked) environment shares it, never clones it."""
        return self

    def __getstate__(self) -> dict[str, Any]:
        return {"step": self.step, "state": self.state}

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.step, self.state, self._lock = data["step"], data["state"], threading.Lock()

    def state_dict(self) -> dict[str, Any]:
        return {"step": self.step, "state": copy.deepcopy(self.state)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        self.step, self.state = int(data["step"]), copy.deepcopy(data["state"])


def env_class(env_id: str) -> type:
    """The class (or factory) registered under `env_id`."""
    from envgym.registration import load_entry_point, spec

    return load_entry_point(spec(env_id).entry_point)


def env_factory(env_id: str, kwargs: dict[str, Any], run: RunState | None) -> str | Callable:
    """What to hand the engine as its environment: the id itself without a run, else a
    factory named `env_id` (the engine names groups after it) that binds each new
    environment to `run`."""
    if run is None:
        return env_id
    from envgym.registration import make

    def factory() -> Any:
        env = make(env_id, **kwargs)
        if hasattr(env, "bind_run"):
            env.bind_run(run)
        return env

    factory.__name__ = env_id
    return factory


def update_from(run: RunState | None, env_id: str, trajectories: list[Any]) -> None:
    """Let `env_id`'s class learn run-level state from this step's finished trajectories."""
    cls = env_class(env_id)
    if run is not None and hasattr(cls, "update_run"):
        cls.update_run(run, [t for t in trajectories if t.error is None])

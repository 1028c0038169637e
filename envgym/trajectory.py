"""Trajectory records and their crash-safe JSON-lines storage.

A trajectory keeps, per turn, what the model saw (the observation messages and the token ids
of that observation as a chat-template delta), what it did (the action text, the exact
sampled token ids and their sampling log-probs), and what the environment said about it
(reward, components, spans, role, state key). Concatenating `obs_token_ids` and
`action_token_ids` over the turns gives the training sequence; the loss mask is 1 exactly on
the action tokens. Token fields are empty for text-only policies (scripted, chat APIs).

Storage is append-only JSON lines, one record per line, flushed and fsync'd per record: a
crash leaves every completed trajectory readable, and at worst a torn last line, which the
reader skips with a warning.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["SCHEMA_VERSION", "Span", "Trajectory", "TrajectoryWriter", "Turn",
           "read_trajectories", "write_trajectories"]

SCHEMA_VERSION = 1


class Span(BaseModel):
    """A character span of an action that a step reward belongs to."""

    kind: str
    start: int
    end: int
    value: float | None = None
    token_start: int | None = None
    """Token range `[token_start, token_end)` within the turn's `action_token_ids` (set by
    the rollout engine for token policies)."""
    token_end: int | None = None


class Turn(BaseModel):
    observation: list[dict[str, Any]] = Field(default_factory=list)
    action: str = ""
    obs_token_ids: list[int] = Field(default_factory=list)
    action_token_ids: list[int] = Field(default_factory=list)
    action_logprobs: list[float] = Field(default_factory=list)
    finish_reason: str | None = None
    reward: float = 0.0
    reward_components: dict[str, float] = Field(default_factory=dict)
    spans: list[Span] = Field(default_factory=list)
    role: str | None = None
    state_key: str | None = None
    info: dict[str, Any] = Field(default_factory=dict)
    temperature: float | None = None
    """The temperature the action was sampled at, where the sampler records it (ARTIST's
    per-role temperatures): `action_logprobs` are of that distribution, and the learner
    recomputes them at it. None: the run's `rollout.temperature`."""


class Trajectory(BaseModel):
    schema_version: int = SCHEMA_VERSION
    env_id: str
    task_id: str | None = None
    seed: int | None = None
    group_id: str | None = None
    agent_id: str | None = None
    policy: str | None = None
    turns: list[Turn] = Field(default_factory=list)
    final_observation: list[dict[str, Any]] = Field(default_factory=list)
    outcome: dict[str, Any] = Field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    error: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    def token_sequence(self) -> tuple[list[int], list[int], list[float]]:
        """The training sequence: `(ids, loss_mask, logprobs)`, concatenating per turn the
        observation-delta ids (mask 0, log-prob 0) and the sampled action ids (mask 1, their
        sampling log-probs)."""
        ids: list[int] = []
        mask: list[int] = []
        logprobs: list[float] = []
        for t in self.turns:
            ids += t.obs_token_ids + t.action_token_ids
            mask += [0] * len(t.obs_token_ids) + [1] * len(t.action_token_ids)
            logprobs += [0.0] * len(t.obs_token_ids) + list(t.action_logprobs)
        return ids, mask, logprobs

    @property
    def total_reward(self) -> float:
        return sum(t.reward for t in self.turns)

    @property
    def success(self) -> bool:
        return bool(self.outcome.get("success", False))


class TrajectoryWriter:
    """Append trajectories to a JSONL file, one fsync'd line each."""

    def __init__(self, path: str | os.PathLike[str], *, append: bool = False, fsync: bool = True):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self._file = open(self.path, "a" if append else "w", encoding="utf-8")
        self.count = 0

    def write(self, trajectory: Trajectory) -> None:
        self._file.write(trajectory.model_dump_json() + "\n")
        self._file.flush()
        if self.fsync:
            os.fsync(self._file.fileno())
        self.count += 1

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_trajectories(path: str | os.PathLike[str], trajectories: Iterable[Trajectory]) -> None:
    """Write a whole file atomically: a temp file renamed into place."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with TrajectoryWriter(tmp, fsync=False) as w:
        for t in trajectories:
            w.write(t)
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_trajectories(path: str | os.PathLike[str]) -> Iterator[Trajectory]:
    """Read a JSONL file; a torn final line (crash mid-write) is skipped with a warning."""
    lines = Path(path).read_text(encoding="utf-8", errors="replace").split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            yield Trajectory.model_validate_json(line)
        except ValueError:
            if i == len(lines) - 1:  # every complete record ends with a newline
                warnings.warn(f"{path}: skipping a torn last line (line {i + 1})", stacklevel=2)
                continue
            raise

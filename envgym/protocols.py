"""Protocols for the models an environment may need, injected at construction.

Environments never load a model themselves: IG needs log-probabilities of a gold answer
(`Scorer`), SLATE and MIND need a rubric judge (`Judge`), a consultation needs a patient
(`Simulator`). Each environment ships an offline default; a policy backend or an HTTP client
can be passed instead. Keeping the contracts here lets `envgym` stay free of model code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from envgym.spaces import Message

__all__ = ["Judge", "Scorer", "Simulator"]


@runtime_checkable
class Scorer(Protocol):
    """Scores targets under contexts: per-token log p(target | context), batched."""

    def score(self, contexts: Sequence[str], targets: Sequence[str]) -> list[list[float]]:
        """Return, for each pair, the log-probability of every target token."""
        ...


@runtime_checkable
class Judge(Protocol):
    """Grades items against rubrics, returning scores (SLATE: ternary -1/0/1; MIND: 0-1)."""

    def judge(self, rubric: str, items: Sequence[dict[str, Any]]) -> list[float]:
        """Return one score per item; `rubric` names the criterion (e.g. "query")."""
        ...


@runtime_checkable
class Simulator(Protocol):
    """A simulated counterpart (e.g. a patient) that answers in natural language."""

    trainable: bool

    def reply(self, history: Sequence[Message], utterance: str) -> str:
        """Answer `utterance` given the conversation so far."""
        ...

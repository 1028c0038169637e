"""Gymnasium spaces for chat conversations and free-form utterances.

gymnasium's `Text` space only admits a fixed charset (alphanumerics by default), so real model
output — punctuation, newlines, emoji, CJK — fails `obs in observation_space`. These spaces
accept any Unicode string and keep `check_env` quiet.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["Conversation", "Message", "Utterance", "ROLES"]

Message = dict[str, Any]
ROLES = ("system", "user", "assistant", "tool", "continuation")
_SAMPLE_CHARS = string.ascii_letters + string.digits + string.punctuation + " \n\té€中🙂"


class Utterance(spaces.Space[str]):
    """Any Unicode string of at most `max_length` characters (one assistant turn)."""

    def __init__(self, max_length: int = 1_000_000, seed: int | np.random.Generator | None = None):
        self.max_length = max_length
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        length = int(self.np_random.integers(0, 64))
        chars = self.np_random.choice(list(_SAMPLE_CHARS), size=length)
        return "".join(chars)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"Utterance(max_length={self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Utterance) and other.max_length == self.max_length


class Conversation(spaces.Space[list]):
    """A list of chat messages `{"role": ..., "content": str, ...}` with roles from `ROLES`."""

    def __init__(self, max_messages: int = 10_000, seed: int | np.random.Generator | None = None):
        self.max_messages = max_messages
        self._utterance = Utterance()
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def seed(self, seed: int | None = None) -> list[int]:
        seeds = super().seed(seed)
        self._utterance.seed(int(self.np_random.integers(2**31)))
        return seeds

    def sample(self, mask: Any = None, probability: Any = None) -> list[Message]:
        count = int(self.np_random.integers(1, 4))
        roles = self.np_random.choice(["user", "assistant", "tool"], size=count)
        return [{"role": str(r), "content": self._utterance.sample()} for r in roles]

    def contains(self, x: Any) -> bool:
        if not isinstance(x, list) or len(x) > self.max_messages:
            return False
        return all(_is_message(m) for m in x)

    def __repr__(self) -> str:
        return f"Conversation(max_messages={self.max_messages})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Conversation) and other.max_messages == self.max_messages


def _is_message(m: Any) -> bool:
    return (
        isinstance(m, dict)
        and m.get("role") in ROLES
        and isinstance(m.get("content"), str)
    )

"""verifiers both ways (the `verifiers` extra): `verifiers:ID` imports an installed taskset
as a `TextEnv` (`env`), and `load_environment(env_id, **kwargs)` gives verifiers an envgym
environment (`export`)."""

from __future__ import annotations

from typing import Any

__all__ = ["load_environment"]


def load_environment(env_id: str, **kwargs: Any) -> Any:
    """A verifiers environment whose tasks are `env_id`'s seeds, scored by its reward."""
    from envgym.integrations.verifiers.export import load_environment as load

    return load(env_id, **kwargs)

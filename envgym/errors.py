"""The envgym exception hierarchy.

Bad *actions* never raise: an environment answers them with an explanatory observation.
These exceptions are for bad *configuration*, missing resources and misuse of the API, and
every message says what to do about it.

    EnvGymError
    ├── UnknownEnvironment      an id that is not registered (with close-match suggestions)
    ├── RegistrationError       a malformed id or entry point
    ├── InvalidConfig           a config value or constructor argument that cannot work
    ├── DatasetError            a dataset file that is missing or cannot be parsed
    ├── ResetNeeded             step() before reset(), or after the episode ended
    ├── SandboxUnavailable      the requested code-execution backend cannot run here
    ├── RetrieverUnavailable    the retrieval index or server cannot be reached
    ├── PolicyError             a policy backend failed or was misconfigured
    └── DependencyNotInstalled  an optional extra (vllm, docker, ...) is missing
"""

from __future__ import annotations

import difflib

__all__ = [
    "DatasetError",
    "DependencyNotInstalled",
    "EnvGymError",
    "InvalidConfig",
    "PolicyError",
    "RegistrationError",
    "ResetNeeded",
    "RetrieverUnavailable",
    "SandboxUnavailable",
    "UnknownEnvironment",
]


class EnvGymError(Exception):
    """Base class of every error envgym raises on purpose."""


class UnknownEnvironment(EnvGymError, KeyError):
    """Raised by `make` and `spec` for an id that is not registered."""

    def __init__(self, env_id: str, known: list[str]):
        self.env_id = env_id
        self.suggestions = difflib.get_close_matches(env_id, known, n=3, cutoff=0.5)
        message = f"Environment `{env_id}` is not registered."
        if self.suggestions:
            message += " Did you mean: " + ", ".join(f"`{s}`" for s in self.suggestions) + "?"
        message += " Run `envgym list` to see every registered environment."
        super().__init__(message)

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])


class RegistrationError(EnvGymError, ValueError):
    """Raised for a malformed environment id or an entry point that cannot be loaded."""


class InvalidConfig(EnvGymError, ValueError):
    """Raised when a config value or constructor argument cannot work; names the field."""


class DatasetError(EnvGymError, ValueError):
    """Raised when a dataset path is missing or a record does not match its format."""


class ResetNeeded(EnvGymError, RuntimeError):
    """Raised when `step` is called before `reset` or after the episode has ended."""


class SandboxUnavailable(EnvGymError, RuntimeError):
    """Raised when the requested sandbox backend cannot run here; says how to fix it."""


class RetrieverUnavailable(EnvGymError, RuntimeError):
    """Raised when a retrieval index is missing or a retrieval server does not answer."""


class PolicyError(EnvGymError, RuntimeError):
    """Raised when a policy spec is malformed or its backend fails."""


class DependencyNotInstalled(EnvGymError, ImportError):
    """Raised when an optional dependency is needed; names the extra to install."""

"""The wire types of an envgym environment served over OpenEnv (pydantic, on openenv-core's bases).

They carry envgym's step contract unchanged, so a client on the other side of the wire can
rebuild exactly what `TextEnv.step` returned in-process:

* an action is the assistant turn's text (`content`), or one text per agent;
* an observation holds the *new* chat messages, the reward and its named components,
  `terminated` / `truncated` (OpenEnv's `done` is their OR), and `info` with envgym's
  documented keys; the reset observation also carries the tool schemas and stop strings.

Tool schemas are also embedded in the action's JSON schema (`/schema` → `action.tools`), which
is where OpenEnv clients look for what an environment accepts.
"""

from __future__ import annotations

from typing import Annotated, Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["INFO_KEYS", "MAX_ACTION_CHARS", "ChatMessage", "EnvgymAction", "EnvgymObservation",
           "EnvgymState", "MultiAgentAction", "MultiAgentObservation", "action_class"]

MAX_ACTION_CHARS = 262_144
"""Longest action text the server validates (a larger one gets a validation error, not a step):
well above every environment's own `max_action_chars`, so the environment's explanatory
observation still answers over-long actions up to this size."""

INFO_KEYS = {
    "task_id": "group key: equal for the same task",
    "turn": "1-based index of the step just taken (0 after reset)",
    "reward_components": "named parts of the reward; they sum to `reward`",
    "outcome": "on the last step: {success, score, ...metrics}",
    "parse_error": "why the action was malformed, or absent",
    "tool_calls": "the parsed calls, as {name, arguments} dicts",
    "spans": "character spans of the action a step reward belongs to",
    "role": "who acted in hierarchical environments",
    "state_key": "canonical digest of the environment state (GiGPO grouping)",
    "action_class": "a coarse label of the action (IFPO)",
}


class ChatMessage(BaseModel):
    """One chat message; `role` "continuation" asks the client to splice into the running turn."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str


def _utf8(text: Any) -> Any:
    """Lone surrogates cannot cross UTF-8 JSON; they become `?` instead of killing the session."""
    return text.encode("utf-8", "replace").decode("utf-8") if isinstance(text, str) else text


class EnvgymAction(Action):
    """One assistant turn of a single-agent environment."""

    content: str = Field(max_length=MAX_ACTION_CHARS, description="the assistant turn's text")

    @field_validator("content", mode="before")
    @classmethod
    def _clean(cls, value: Any) -> Any:
        return _utf8(value)


class MultiAgentAction(Action):
    """One assistant turn per live agent of a multi-agent environment."""

    actions: dict[str, Annotated[str, Field(max_length=MAX_ACTION_CHARS)]] = Field(
        description="agent id -> that agent's turn text")

    @field_validator("actions", mode="before")
    @classmethod
    def _clean(cls, value: Any) -> Any:
        return {_utf8(k): _utf8(v) for k, v in value.items()} if isinstance(value, dict) else value


class EnvgymObservation(Observation):
    """What `TextEnv.reset` / `step` returned; `reward` is the sum of `reward_components`."""

    env_id: str = ""
    messages: list[ChatMessage] = Field(default_factory=list,
                                        description="the new chat messages of this step")
    reward_components: dict[str, float] = Field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = Field(default_factory=dict,
                                 description="envgym's info dict; documented keys: "
                                 + "; ".join(f"{k}: {v}" for k, v in INFO_KEYS.items()))
    tools: list[dict[str, Any]] = Field(default_factory=list,
                                        description="OpenAI-style tool schemas (reset only)")
    stop_sequences: list[str] = Field(default_factory=list,
                                      description="strings that end an action (reset only)")


class MultiAgentObservation(Observation):
    """What `MultiAgentTextEnv.reset` / `step` returned, per agent (PettingZoo parallel API)."""

    env_id: str = ""
    agents: list[str] = Field(default_factory=list, description="agents still acting")
    trainable: dict[str, bool] = Field(default_factory=dict)
    messages: dict[str, list[ChatMessage]] = Field(default_factory=dict)
    rewards: dict[str, float] = Field(default_factory=dict)
    terminations: dict[str, bool] = Field(default_factory=dict)
    truncations: dict[str, bool] = Field(default_factory=dict)
    infos: dict[str, dict[str, Any]] = Field(default_factory=dict)


class EnvgymState(State):
    """Public episode state only: what a client may know without reading the task."""

    env_id: str = ""
    task_id: str | None = None
    turn: int = 0
    done: bool = True


def action_class(base: type[Action], env_id: str, tools: list[dict[str, Any]]) -> type[Action]:
    """`base` with the environment's tool schemas in its JSON schema (what `/schema` shows)."""
    extra = {"x-envgym-env": env_id, "tools": tools}

    class ServedAction(base):  # type: ignore[valid-type, misc]
        model_config = ConfigDict(json_schema_extra=extra, title=base.__name__)

    ServedAction.__name__ = ServedAction.__qualname__ = base.__name__
    return ServedAction

"""envgym: multi-turn text environments for RL on LLM agents, and the learner for them."""

from envgym import envs as _builtin_envs  # noqa: F401  (registers envgym's own ids, lazily)
from envgym.core import StepResult, TextEnv, state_digest
from envgym.errors import (
    EnvGymError,
    InvalidConfig,
    ResetNeeded,
    UnknownEnvironment,
)
from envgym.multiagent import MultiAgentTextEnv
from envgym.protocols import Judge, Scorer, Simulator
from envgym.registration import EnvSpec, make, register, registry, spec
from envgym.scripted import ScriptedPolicy
from envgym.tools import Tool, ToolCall, ToolCallError
from envgym.trajectory import Trajectory, TrajectoryWriter, Turn, read_trajectories

__version__ = "0.1.0"

__all__ = [
    "EnvGymError",
    "EnvSpec",
    "InvalidConfig",
    "Judge",
    "MultiAgentTextEnv",
    "ResetNeeded",
    "Scorer",
    "ScriptedPolicy",
    "Simulator",
    "StepResult",
    "TextEnv",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "Trajectory",
    "TrajectoryWriter",
    "Turn",
    "UnknownEnvironment",
    "make",
    "read_trajectories",
    "register",
    "registry",
    "spec",
    "state_digest",
]

"""The verifiers taskset package `envgym_export`: envgym environments for verifiers' CLIs.

verifiers imports a taskset by its id as a top-level module (`vf-eval envgym-export` imports
`envgym_export`) and takes its `Taskset`, `Env` and `Task` from `__all__`; envgym installs
this folder under that name. The classes live in `envgym.integrations.verifiers.export`.
"""

from envgym.integrations.verifiers.export import (
    EnvgymConfig,
    EnvgymData,
    EnvgymEnv,
    EnvgymEnvConfig,
    EnvgymTask,
    EnvgymTaskset,
    load_environment,
)

__all__ = ["EnvgymConfig", "EnvgymData", "EnvgymEnv", "EnvgymEnvConfig", "EnvgymTask",
           "EnvgymTaskset", "load_environment"]

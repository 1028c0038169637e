"""`python -m envgym.integrations.verl.main [hydra overrides]`: verl's PPO trainer with
envgym's estimators and agent loop registered.

verl computes advantages inside its TaskRunner actor and runs agent loops in worker actors,
so registering in this driver alone is not enough: the launcher also sets Ray's
`worker_process_setup_hook` to `envgym.integrations.verl.main.setup`, which every Ray
worker process runs at start-up.
"""

from __future__ import annotations

import sys

HOOK = "envgym.integrations.verl.main.setup"


def setup() -> None:
    """Register envgym's estimators and its `envgym` agent loop in this process."""
    from envgym.integrations.verl.estimators import register

    register()
    import envgym.integrations.verl.agent_loop  # noqa: F401  (the @register("envgym") side effect)


def main() -> None:
    setup()
    sys.argv += [f"+ray_kwargs.ray_init.runtime_env.worker_process_setup_hook={HOOK}"]
    from verl.trainer.main_ppo import main as verl_main

    verl_main()


if __name__ == "__main__":
    main()

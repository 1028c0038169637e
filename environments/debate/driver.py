"""A minimal loop that plays debate episodes with one scripted policy per agent.

The rollout engine does the same at scale; this loop is what tests and quick experiments use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from envgym.scripted import ScriptedPolicy

__all__ = ["play", "play_many"]


def play(env: Any, policies: dict[str, ScriptedPolicy], seed: int | None = None,
         options: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """One episode; returns each agent's final `info` (with `outcome`)."""
    observations, _ = env.reset(seed=seed, options=options)
    history = {a: list(obs) for a, obs in observations.items()}
    last_info: dict[str, dict[str, Any]] = {}
    while env.agents:
        actions = {a: policies[a].act(env, history[a]) for a in env.agents}
        observations, _, _, _, infos = env.step(actions)
        for a, action in actions.items():
            history[a] += [{"role": "assistant", "content": action}, *observations[a]]
        last_info |= infos
    return last_info


def play_many(env: Any, make_policies: Callable[[int], dict[str, ScriptedPolicy]],
              seeds: range | list[int], options: dict[str, Any] | None = None
              ) -> list[dict[str, Any]]:
    """`agent_0`'s outcome of each episode (each holds every agent's numbers)."""
    outcomes = []
    for seed in seeds:
        infos = play(env, make_policies(seed), seed=seed, options=options)
        outcomes.append(infos[env.possible_agents[0]]["outcome"])
    return outcomes

"""A scripted policy's randomness is its own stream, never the task's. Callers seed a policy
with the episode's task seed (hack checks) or with a number equal to it (SFT at run seed 0);
environments draw their tasks from `default_rng(task_seed)`, so an untagged policy replays the
task's draws and its "random" choices follow the task."""

from __future__ import annotations

import numpy as np

from envgym.scripted import ScriptedPolicy


def test_a_policy_seeded_like_a_task_does_not_replay_the_tasks_draws():
    same = sum(ScriptedPolicy(seed=k).rng.random() == np.random.default_rng(k).random()
               for k in range(50))
    assert same == 0
    assert ScriptedPolicy(seed=3).rng.random() == ScriptedPolicy(seed=3).rng.random()
    assert ScriptedPolicy(seed=3).rng.random() != ScriptedPolicy(seed=4).rng.random()


def test_the_seed_zero_guess_warm_start_is_not_tied_to_the_task_type():
    """The demo's SFT data at run seed 0: task k is played by the policy seeded 0 * 100_003 + k.
    Before the tag, every trend task's guess was A and every anomaly task's C or D."""
    from envgym.agents.sft import noisy_demonstrations

    kwargs = {"series_length": 512, "sketch_points": 8, "zoom_points": 8, "max_rounds": 2,
              "tool_format": "tag", "format_rules": "lenient",
              "task_types": ["trend", "anomaly"], "max_turns": 4}
    demos = noisy_demonstrations("envgym/TimeSeries-v0", {"guess": 1.0}, 64, (0, 100_000),
                                 kwargs, seed=0)
    letters: dict[str, set[str]] = {"trend": set(), "anomaly": set()}
    for traj in demos:
        letters[traj.outcome["task_type"]].add(traj.outcome["answer"])
    assert letters["trend"] == {"A", "B"}
    assert {"A", "B"} & letters["anomaly"]

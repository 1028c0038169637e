"""Grader fixtures for TimeSeries-v0: the judgements the reward must reach (`envgym.graders`).

Written from the specification of the reward (the module docstring of `env.py`, ARTIST §5.2),
one or more per row of `rules.RULES`, so that `envgym check envgym/TimeSeries-v0 --mutants`
kills every single-rule mutant: switching a rule off or moving its threshold changes at least
one judgement below. Exact values are written as literals from the spec (0.1 per round, 3 per
correct answer, -2 override, ...), never read back from the rule table, which would make a
mutant agree with itself.

Seeds are fixed so each case plays a known kind of task: seed 1 is a `trend` task (two
evidence intervals of 32 points), seed 5 a `changepoint` task (one interval of 33 points),
whatever the shipped series length. The cases that count evidence intervals or points also
pin the kind in `env_kwargs` (`task_types`), because a config that ships fewer task types
(the demo's trend and anomaly) deals a seed a different kind of task. Actions are written in
the tool format the checked arguments ask for, and the limits that depend on an argument
(series length, point cost, `zoom_points`) are read from the environment, so the fixtures hold
under every shipped config. Cases that need ARTIST's format rules, the bonus's round budget or
exact sums pin those arguments in `env_kwargs`.
"""

from __future__ import annotations

import json
from typing import Any

from envgym.graders import GraderCase, Ordering

from envgym.environments.timeseries.env import ZOOM

__all__ = ["fixtures"]

_EXACT = {"point_cost": 0.0, "format_rules": "artist", "require_first_zoom": True,
          "max_zoom_span": None}
_BONUS = {**_EXACT, "max_rounds": 6, "exploration_bonus": 1.0}
_TWO, _ONE = 1, 5  # seeds: a task with two evidence intervals, a task with one
_BONUS_TWO = {**_BONUS, "task_types": ["trend"]}
_BONUS_ONE = {**_BONUS, "task_types": ["changepoint"]}


def _zoom(env: Any, start: int, end: int) -> str:
    if env.tool_format == "tag":
        return f"<think>look</think><zoom>[{start}, {end}]</zoom>"
    call = json.dumps({"name": ZOOM, "arguments": {"ts_seg": [start, end]}})
    return f"<think>look</think><tool_call>{call}</tool_call>"


def _evidence(k: int):
    """Zoom onto the task's k-th evidence interval (the last one when there are fewer)."""
    def act(env: Any, history: list, info: dict) -> str:
        s, e = env.task.evidence[min(k, len(env.task.evidence) - 1)]
        return _zoom(env, max(0, s - 4), min(len(env.task.series) - 1, e + 4))
    return act


def _evidence_piece(i: int):
    """The i-th 2-point piece of the first evidence interval: each shows unseen evidence."""
    def act(env: Any, history: list, info: dict) -> str:
        s, _ = env.task.evidence[0]
        return _zoom(env, s + 2 * i, s + 2 * i + 1)
    return act


def _gold(env: Any, history: list, info: dict) -> str:
    return f"<think>seen it</think><answer>{env.task.answer}</answer>"


def _gold_no_think(env: Any, history: list, info: dict) -> str:
    return f"<answer>{env.task.answer}</answer>"


def _not_an_option(env: Any, history: list, info: dict) -> str:
    return "<think>hmm</think><answer>Z</answer>"


def _wrong(env: Any, history: list, info: dict) -> str:
    letters = "ABCDEFGH"[: len(env.task.options)]
    return f"<think>seen it</think><answer>{next(x for x in letters if x != env.task.answer)}</answer>"


def _quarter(env: Any) -> int:
    """The span cap the spec sets: a quarter of the series (no config sets max_zoom_span)."""
    return len(env.task.series) // 4


def _widest(env: Any, history: list, info: dict) -> str:
    return _zoom(env, 0, _quarter(env) - 1)


def _past_cap(env: Any, history: list, info: dict) -> str:
    return _zoom(env, 0, _quarter(env))


def _whole(env: Any, history: list, info: dict) -> str:
    return _zoom(env, 0, len(env.task.series) - 1)


def _junk(env: Any, history: list, info: dict) -> str:
    """A valid 2-point zoom at the series' end, away from the evidence: no information."""
    n = len(env.task.series)
    return _zoom(env, n - 2, n - 1)


def _junk_turn_charge(env: Any) -> tuple[float, float]:
    """A malformed turn costs 0.1 more than the costliest valid zoom (0.1 + a full span)."""
    charge = -(0.1 + env.point_cost * _quarter(env) + 0.1)
    return (charge - 1e-9, charge + 1e-9)


def _bonus_cases() -> list[GraderCase | Ordering]:
    two = GraderCase("two informative zooms earn the exploration bonus",
                     (_evidence(0), _evidence(1), _gold), seed=_TWO, env_kwargs=_BONUS_TWO,
                     expect={"component.exploration": (1, 1), "reward": (8.8, 8.8),
                             "info.task_return": (7.8, 7.8)},
                     why="ARTIST's b_exp for 2-4 segments; shaping, left out of the task return")
    oracle = GraderCase("the oracle: one evidence zoom, the gold answer", (_evidence(0), _gold),
                        seed=_ONE, env_kwargs=_BONUS_ONE, expect={"component.exploration": (0, 0)})
    padded = GraderCase("the oracle plus a junk 2-point zoom buys no bonus",
                        (_evidence(0), _junk, _gold), seed=_ONE, env_kwargs=_BONUS_ONE,
                        expect={"component.exploration": (0, 0)},
                        why="issue 36: the junk zoom shows no evidence the episode has not seen")
    four = tuple(_evidence_piece(i) for i in range(4))
    return [
        two, oracle, padded,
        Ordering("a junk zoom loses on the training reward", better=oracle, worse=padded,
                 key="reward", margin=0.05),
        Ordering("a junk zoom loses on the task reward", better=oracle, worse=padded,
                 key="info.task_return", margin=0.05),
        GraderCase("a repeated evidence zoom adds nothing", (_evidence(0), _evidence(0), _gold),
                   seed=_ONE, env_kwargs=_BONUS_ONE, expect={"component.exploration": (0, 0)}),
        GraderCase("four informative zooms earn the bonus", (*four, _gold), seed=_ONE,
                   env_kwargs=_BONUS_ONE, expect={"component.exploration": (1, 1)}),
        GraderCase("five informative zooms are past ARTIST's 2-4", (*four, _evidence_piece(4), _gold),
                   seed=_ONE, env_kwargs=_BONUS_ONE, expect={"component.exploration": (0, 0)}),
        GraderCase("the bonus is half at training step 150", two.actions, seed=_TWO,
                   env_kwargs=_BONUS_TWO, options={"train_step": 150},
                   expect={"component.exploration": (0.5, 0.5)}),
        GraderCase("the bonus decays to 0 at training step 300", two.actions, seed=_TWO,
                   env_kwargs=_BONUS_TWO, options={"train_step": 300},
                   expect={"component.exploration": (0, 0)}),
    ]


def _format_cases() -> list[GraderCase | Ordering]:
    valid = GraderCase("a valid first zoom, full span", (_widest,), seed=2,
                       expect={"component.round": (-0.1, -0.1)})
    junk = GraderCase("a junk first turn", ("no call at all",), seed=2,
                      expect={"component.format": _junk_turn_charge, "component.round": (0, 0)})
    return [
        valid, junk,
        Ordering("a valid zoom earns more turn reward than a junk turn", better=valid,
                 worse=junk, margin=0.05, why="issue 37: turn credit must not be reversed"),
        GraderCase("the override replaces R_c after an invalid round",
                   (_evidence(0), "junk", _gold), seed=_ONE, env_kwargs=_EXACT,
                   expect={"component.controller_format": (-2, -2),
                           "info.controller_return": (-2, -2), "component.accuracy": (3, 3)},
                   why="ARTIST: f_c < 0 gives R_c = -2, not -2 plus the charges"),
        GraderCase("no valid segment in five tries: R_c is -2", (_gold,) * 5, seed=3,
                   env_kwargs={**_EXACT, "first_seg_trials": 5},
                   expect={"component.accuracy": (0, 0), "terminated": (1, 1),
                           "info.controller_return": (-2, -2)}),
        GraderCase("an answer that is not an option: R_r = -1, episode over",
                   (_evidence(0), _not_an_option), seed=_ONE, env_kwargs=_EXACT,
                   expect={"component.reasoner_format": (-1, -1), "terminated": (1, 1)}),
        GraderCase("an answer without <think> loses 0.5 of f_r", (_evidence(0), _gold_no_think),
                   seed=_ONE, env_kwargs=_EXACT,
                   expect={"component.reasoner_format": (0.5, 0.5), "component.accuracy": (3, 3)}),
        GraderCase("round 1 must be a zoom", (_gold,), seed=3,
                   env_kwargs={"require_first_zoom": True},
                   expect={"component.accuracy": (0, 0), "component.format": (-1, -0.01),
                           "terminated": (0, 0)}),
    ]


def _zoom_cases() -> list[GraderCase]:
    return [
        GraderCase("the widest zoom is down-sampled to zoom_points values", (_widest,), seed=1,
                   expect={"info.values_shown": lambda env: (1, env.zoom_points)}),
        GraderCase("a narrow zoom shows every point",
                   (lambda e, h, i: _zoom(e, 100, 99 + e.zoom_points),), seed=1,
                   expect={"info.values_shown": lambda env: (env.zoom_points, env.zoom_points)}),
        GraderCase("one point past a quarter of the series is refused", (_past_cap,), seed=2,
                   expect={"component.format": (-1, -0.01), "component.round": (0, 0)}),
        GraderCase("a whole-series zoom is refused", (_whole,), seed=2,
                   expect={"component.format": (-1, -0.01), "component.round": (0, 0)}),
        GraderCase("points cost per point inspected", (lambda e, h, i: _zoom(e, 0, 99),), seed=2,
                   env_kwargs={"point_cost": 1e-3}, expect={"component.points": (-0.1, -0.1)}),
    ]


def fixtures() -> list[GraderCase | Ordering]:
    honest = GraderCase("one evidence zoom then the gold answer", (_evidence(0), _gold),
                        seed=0, env_kwargs=_EXACT,
                        expect={"component.accuracy": (3, 3), "component.consistency": (3, 3)})
    wrong = GraderCase("a wrong letter earns no accuracy or consistency", (_evidence(0), _wrong),
                       seed=0, env_kwargs=_EXACT,
                       expect={"component.accuracy": (0, 0), "component.consistency": (0, 0),
                               "info.accuracy": (0, 0)})
    return [honest, wrong, *_bonus_cases(), *_format_cases(), *_zoom_cases()]

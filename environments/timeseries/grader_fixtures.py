"""Grader fixtures for TimeSeries-v0: the judgements the reward must reach (`envgym.graders`).

They pin each rule an attack would exploit if it were deleted: the exploration bonus stays a
separate shaping component that the task return (`info.task_return`) leaves out, so a junk
zoom never raises the task return; a wide zoom is down-sampled to `zoom_points` values and a
zoom wider than the span cap is refused, so brute force reads no detail; round 1 must be a
zoom; a wrong letter earns neither accuracy nor consistency; the bonus decays with the
training step. Seeds are fixed, so each case plays one known task. Actions are written in the
tool format the checked arguments ask for, and limits that depend on an argument
(`zoom_points`) are read from the environment, so the fixtures hold under every shipped
config, not only the defaults.
"""

from __future__ import annotations

import json
from typing import Any

from envgym.graders import GraderCase, Ordering

from envgym.environments.timeseries.env import ZOOM

__all__ = ["fixtures"]

_KW = {"point_cost": 0.0}  # exact sums: the per-point cost is pinned by its own case


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


def _gold(env: Any, history: list, info: dict) -> str:
    return f"<think>seen it</think><answer>{env.task.answer}</answer>"


def _wrong(env: Any, history: list, info: dict) -> str:
    letters = "ABCDEFGH"[: len(env.task.options)]
    return f"<think>seen it</think><answer>{next(x for x in letters if x != env.task.answer)}</answer>"


def _widest(env: Any, history: list, info: dict) -> str:
    return _zoom(env, 0, env._span_cap() - 1)


def _whole(env: Any, history: list, info: dict) -> str:
    return _zoom(env, 0, len(env.task.series) - 1)


def _junk(env: Any, history: list, info: dict) -> str:
    n = len(env.task.series)
    return _zoom(env, n - 2, n - 1)


def fixtures() -> list[GraderCase | Ordering]:
    honest = GraderCase("one evidence zoom then the gold answer", (_evidence(0), _gold), seed=0,
                        env_kwargs=_KW, expect={"component.accuracy": (3, 3),
                                                "component.consistency": (3, 3)})
    padded = GraderCase("evidence zoom, junk 2-point zoom, gold answer",
                        (_evidence(0), _junk, _gold), seed=0, env_kwargs=_KW,
                        expect={"component.exploration": (1, 1),
                                "info.task_return": (7.8, 7.8)},
                        why="the bonus is paid in training but is not task reward")
    return [
        honest,
        padded,
        GraderCase("bonus decays to 0 at training step 300", (_evidence(0), _junk, _gold),
                   seed=0, env_kwargs=_KW, options={"train_step": 300},
                   expect={"component.exploration": (0, 0)}),
        GraderCase("task return leaves the bonus out", (_evidence(0), _junk, _gold), seed=0,
                   env_kwargs=_KW, expect={"reward": (8.8, 8.8), "info.task_return": (7.8, 7.8)}),
        Ordering("a junk zoom never raises the task return", better=honest, worse=padded,
                 key="info.task_return", margin=0.05),
        GraderCase("a wrong letter earns no accuracy or consistency", (_evidence(0), _wrong),
                   seed=0, env_kwargs=_KW,
                   expect={"component.accuracy": (0, 0), "component.consistency": (0, 0),
                           "info.accuracy": (0, 0)}),
        GraderCase("the widest zoom is down-sampled to zoom_points values", (_widest,), seed=1,
                   expect={"info.values_shown": lambda env: (1, env.zoom_points),
                           "component.round": (-0.1, -0.1)}),
        GraderCase("a narrow zoom shows every point",
                   (lambda e, h, i: _zoom(e, 100, 99 + e.zoom_points),), seed=1,
                   expect={"info.values_shown": lambda env: (env.zoom_points, env.zoom_points)}),
        GraderCase("a whole-series zoom is refused", (_whole,), seed=2,
                   expect={"component.format": (-1, -0.01), "component.round": (0, 0)}),
        GraderCase("points cost per point inspected", (lambda e, h, i: _zoom(e, 0, 99),), seed=2,
                   env_kwargs={"point_cost": 1e-3},
                   expect={"component.points": (-0.1, -0.1)}),
        GraderCase("round 1 must be a zoom", (_gold,), seed=3,
                   expect={"component.accuracy": (0, 0), "component.format": (-1, -0.01),
                           "terminated": (0, 0)}),
        GraderCase("answering from the sketch alone is refused at every try",
                   (_gold,) * 5, seed=3, expect={"component.accuracy": (0, 0),
                                                 "terminated": (1, 1)}),
    ]

"""Scripted baselines for the time-series environment.

* `oracle` zooms onto the evidence intervals (privileged) and answers correctly.
* `heuristic` scans the series in equal segments and answers from the values it saw, using
  only the conversation: it is the honest baseline a learned policy should beat.
* `random` zooms at random, emits junk now and then, and guesses.

Reward attacks (each must score below `heuristic`; `tests/timeseries/test_hacking.py`):

* `hack_overview` makes the obligatory first zoom on two points and answers from the
  opening sketch (the values shown before any zoom).
* `hack_wide_zoom` asks for the whole series in one zoom, and when that is refused takes the
  widest zoom allowed, then answers from everything it has seen.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from envgym.hacks import Ceiling
from envgym.scripted import ScriptedPolicy
from envgym.spaces import Message

from envgym.environments.timeseries.env import ZOOM

_SEGMENT_RE = re.compile(r"segment \[(\d+), (\d+)\]: (\d+) values, step ([\d.]+)\n([-\d. ]+)")
_RANGE_RE = re.compile(r"\[(\d+), (\d+)\]")
_LENGTH_RE = re.compile(r"has (\d+) points")


def _zoom(env: Any, start: int, end: int, thought: str) -> str:
    if env.tool_format == "tag":
        return f"<think>{thought}</think><zoom>[{start}, {end}]</zoom>"
    call = json.dumps({"name": ZOOM, "arguments": {"ts_seg": [start, end]}})
    return f"<think>{thought}</think><tool_call>{call}</tool_call>"


def _answer(letter: str, thought: str = "I have seen enough.") -> str:
    return f"<think>{thought}</think><answer>{letter}</answer>"


class OraclePolicy(ScriptedPolicy):
    """Zooms onto each evidence interval, then answers with the gold letter."""

    def act(self, env: Any, messages: list[Message]) -> str:
        task, done = env.task, len(env.segments)
        plan = [(max(0, s - 8), min(len(task.series) - 1, e + 8)) for s, e in task.evidence]
        plan = plan[: max(1, env.max_rounds)]
        if done < len(plan) and not env.answering:
            return _zoom(env, *plan[done], "Inspect the evidence.")
        return _answer(task.answer)


class RandomPolicy(ScriptedPolicy):
    """Uniformly random zooms, occasional junk, then a random option."""

    def act(self, env: Any, messages: list[Message]) -> str:
        n = int(_LENGTH_RE.search(messages[1]["content"])[1])
        letters = _option_letters(messages)
        roll = self.rng.random()
        if roll < 0.15:
            return "".join(self.rng.choice(list("<>{}[]abc xyz/\"'"), size=20))
        if roll < 0.6 and not env.answering:
            start = int(self.rng.integers(0, n - 2))
            return _zoom(env, start, int(self.rng.integers(start + 1, n)), "Look somewhere.")
        return _answer(str(self.rng.choice(letters)), "Guess.")


class HeuristicPolicy(ScriptedPolicy):
    """Scans evenly with every zoom round, then answers from the values it has read."""

    def act(self, env: Any, messages: list[Message]) -> str:
        text = messages[1]["content"]
        n = int(_LENGTH_RE.search(text)[1])
        rounds = env.max_rounds
        seen = _SEGMENT_RE.findall("\n".join(m["content"] for m in messages[2:]))
        if len(seen) < rounds and not getattr(env, "answering", False):
            width = min(n // rounds, _span_cap(env, n))
            start = int(np.linspace(0, n - width, rounds).astype(int)[len(seen)])
            return _zoom(env, start, start + width - 1, "Scan on.")
        positions, values = _points(seen)
        return _answer(_decide(text, positions, values), "Answer from the scanned values.")


class HackOverviewPolicy(ScriptedPolicy):
    """Attack: a token first zoom, then the answer read off the opening sketch."""

    ceiling = Ceiling("heuristic", margin=-0.3, metrics=("success_rate",),
                      why="the sketch is compensated: reading it alone is chance")

    def act(self, env: Any, messages: list[Message]) -> str:
        if not env.segments and not env.answering:
            return _zoom(env, 0, 1, "Formality.")
        sketch = _SEGMENT_RE.findall(messages[1]["content"])
        return _answer(_decide(messages[1]["content"], *_points(sketch)), "From the overview.")


class HackWideZoomPolicy(ScriptedPolicy):
    """Attack: one whole-series zoom (the widest allowed when refused), then answer."""

    ceiling = Ceiling("heuristic", margin=-0.2, metrics=("success_rate",),
                      why="one zoom covers at most a quarter of the series")

    def act(self, env: Any, messages: list[Message]) -> str:
        text = messages[1]["content"]
        n = int(_LENGTH_RE.search(text)[1])
        if not env.segments and not env.answering:
            tried = any("Invalid action" in str(m["content"]) for m in messages[2:])
            return _zoom(env, 0, _span_cap(env, n) - 1 if tried else n - 1, "See it all.")
        seen = _SEGMENT_RE.findall("\n".join(str(m["content"]) for m in messages[1:]))
        return _answer(_decide(text, *_points(seen)), "From the wide view.")


def _span_cap(env: Any, n: int) -> int:
    """The widest zoom the environment accepts (its `max_zoom_span`, else a quarter)."""
    return getattr(env, "max_zoom_span", None) or max(2, n // 4)


def _option_letters(messages: list[Message]) -> list[str]:
    return re.findall(r"^([A-H])\) ", messages[1]["content"], re.M)


def _points(seen: list[tuple[str, ...]]) -> tuple[np.ndarray, np.ndarray]:
    pos, val = [], []
    for start, _end, _count, step, values in seen:
        for i, v in enumerate(values.split()):
            pos.append(int(start) + (i + 0.5) * float(step))
            val.append(float(v))
    return np.array(pos), np.array(val)


def _decide(text: str, pos: np.ndarray, val: np.ndarray) -> str:
    """Answer from the values only, by question type."""
    options = re.findall(r"^([A-H])\) (.*)$", text, re.M)
    resid = val - _smooth(val)
    if "volatility" in text:
        jumps = np.abs(np.diff(val, prepend=val[0]))
        split = _best_split(jumps)
        return _window_containing(options, pos[split])
    if "How many" in text:
        peaks = _peaks(resid, threshold=2.0)
        return options[min(len(peaks), 4) - 1][0] if peaks else "A"
    if "Which comes first" in text:
        return "A" if pos[int(np.argmax(resid))] < pos[int(np.argmin(resid))] else "B"
    if "mean level" in text:
        (a0, a1), (b0, b1) = [tuple(map(int, r)) for r in _RANGE_RE.findall(text.split("Question:")[1])[:2]]
        return "A" if _level(pos, val, a0, a1) >= _level(pos, val, b0, b1) else "B"
    return _window_containing(options, pos[int(np.argmax(np.abs(resid)))])


def _level(pos: np.ndarray, val: np.ndarray, lo: int, hi: int) -> float:
    """Mean of the values read inside [lo, hi], else the value read nearest to it."""
    inside = (pos >= lo) & (pos <= hi)
    if inside.any():
        return float(val[inside].mean())
    return float(val[int(np.argmin(np.abs(pos - (lo + hi) / 2)))])


def _smooth(val: np.ndarray, width: int = 9) -> np.ndarray:
    padded = np.pad(val, width // 2, mode="edge")
    return np.array([np.median(padded[i:i + width]) for i in range(len(val))])


def _peaks(resid: np.ndarray, threshold: float) -> list[int]:
    above = np.flatnonzero(resid > threshold)
    groups = [int(g[0]) for g in np.split(above, np.flatnonzero(np.diff(above) > 3) + 1) if len(g)]
    return groups


def _best_split(jumps: np.ndarray) -> int:
    """Index that best separates a calm stretch from a volatile one (max log-variance gap)."""
    best, best_score = len(jumps) // 2, -np.inf
    for k in range(8, len(jumps) - 8):
        score = abs(np.log(jumps[:k].mean() + 1e-6) - np.log(jumps[k:].mean() + 1e-6))
        if score > best_score:
            best, best_score = k, score
    return best


def _window_containing(options: list[tuple[str, str]], position: float) -> str:
    best, distance = options[0][0], np.inf
    for letter, text in options:
        match = _RANGE_RE.search(text)
        if not match:
            continue
        lo, hi = int(match[1]), int(match[2])
        d = 0.0 if lo <= position <= hi else min(abs(position - lo), abs(position - hi))
        if d < distance:
            best, distance = letter, d
    return best

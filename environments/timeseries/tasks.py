"""Deterministic series-and-question generator for the time-series environment.

Every task is a long series (1,024 points by default) with a question whose answer needs a
few short stretches of it, the ARTIST setting: showing the whole series at full resolution is
expensive, and a coarse sketch hides the evidence. Five task types, each with ground-truth
evidence intervals:

* `anomaly` — one short spike; in which window does it occur? (4 options)
* `count` — how many short spikes are there? (1–4)
* `trend` — which of two named intervals sits at the higher level? (2 options)
* `changepoint` — in which window does the volatility change? Mean-pooled sketches hide it.
* `multi` — which comes first, the upward spike or the downward dip? (2 options)

The opening sketch must not answer any question. Mean-pooling alone does not hide a level
shift or a tall spike, so after building a task every sketch bucket is *compensated*: the
event's net contribution to the bucket is subtracted, spread evenly, from the bucket's points
outside the evidence. Every sketch value then equals the baseline's, which is independent of
the answer, so a policy reading the overview alone is at chance; the evidence itself is
untouched, so zooming onto it answers the question. (The environment also caps the span of
one zoom, so a single whole-series zoom cannot stand in for the evidence either.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["TASK_TYPES", "Task", "generate_task"]

TASK_TYPES = ("anomaly", "count", "trend", "changepoint", "multi")
LETTERS = "ABCDEFGH"
SPIKE_WIDTH = 3


@dataclass
class Task:
    """One question about one series. `answer` is an option letter."""

    task_id: str
    task_type: str
    series: list[float]
    question: str
    options: list[str]
    answer: str
    evidence: list[tuple[int, int]] = field(default_factory=list)

    @property
    def chance(self) -> float:
        return 1.0 / len(self.options)


def generate_task(seed: int, length: int = 1024, task_types: tuple[str, ...] = TASK_TYPES,
                  sketch_points: int = 16) -> Task:
    """The task for `seed`; the same seed always gives the same task. `sketch_points` is the
    environment's overview resolution, whose buckets are compensated (module docstring)."""
    rng = np.random.default_rng(seed)
    kind = task_types[int(rng.integers(len(task_types)))]
    base = _baseline(rng, length)
    baseline = base.copy()
    task = _BUILDERS[kind](rng, base, width=length // max(1, sketch_points))
    series = np.asarray(task.series)
    _hide_from_sketch(series, baseline, task.evidence, sketch_points)
    task.series = _round(series)
    task.task_id = f"ts-{kind}-{seed}"
    return task


def _hide_from_sketch(series: np.ndarray, baseline: np.ndarray,
                      evidence: list[tuple[int, int]], buckets: int) -> None:
    """Subtract, within each sketch bucket, the event's net contribution from the bucket's
    non-evidence points, so every bucket mean equals the baseline's (in place)."""
    inside = np.zeros(len(series), dtype=bool)
    for s, e in evidence:
        inside[s:e + 1] = True
    delta = series - baseline
    for idx in np.array_split(np.arange(len(series)), max(1, min(buckets, len(series)))):
        free = idx[~inside[idx]]
        if len(free):
            series[free] -= delta[idx].sum() / len(free)


def _baseline(rng: np.random.Generator, n: int) -> np.ndarray:
    t = np.arange(n)
    period = rng.uniform(n / 4, n / 1.5)
    wave = rng.uniform(0.5, 1.5) * np.sin(2 * np.pi * t / period + rng.uniform(0, 2 * np.pi))
    drift = rng.uniform(-1, 1) * t / n
    return wave + drift + rng.normal(0, 0.4, n)


def _windows(n: int) -> list[tuple[int, int]]:
    width = n // 8
    return [(i * width, (i + 1) * width - 1) for i in range(8)]


def _spike(series: np.ndarray, pos: int, height: float) -> tuple[int, int]:
    series[pos:pos + SPIKE_WIDTH] += height * np.array([0.6, 1.0, 0.6])
    return (pos, pos + SPIKE_WIDTH - 1)


def _window_question(rng, series, inside: int, what: str, evidence, kind) -> Task:
    """Four window options, one of them containing position `inside`."""
    windows = _windows(len(series))
    right = next(i for i, (a, b) in enumerate(windows) if a <= inside <= b)
    others = [i for i in range(len(windows)) if i != right]
    chosen = sorted([right, *rng.choice(others, size=3, replace=False).tolist()])
    options = [f"[{windows[i][0]}, {windows[i][1]}]" for i in chosen]
    answer = LETTERS[chosen.index(right)]
    return Task("", kind, _round(series), f"In which window does {what}?", options, answer, evidence)


def _anomaly(rng, series, width: int = 64) -> Task:
    n = len(series)
    pos = _event_position(rng, n)
    ev = _spike(series, pos, rng.choice([-1, 1]) * rng.uniform(5, 7))
    return _window_question(rng, series, pos + 1, "the single short spike occur", [ev], "anomaly")


def _count(rng, series, width: int = 64) -> Task:
    n, k = len(series), int(rng.integers(1, 5))
    positions = _spread_positions(rng, n, k, gap=60)
    evidence = [_spike(series, p, rng.uniform(5, 7)) for p in positions]
    options = ["1", "2", "3", "4"]
    question = "How many short upward spikes does the series contain?"
    return Task("", "count", _round(series), question, options, LETTERS[k - 1], evidence)


def _trend(rng, series, width: int = 64) -> Task:
    """Two named intervals, each at most half a sketch bucket wide, so every bucket keeps
    room outside the evidence for the compensation that hides the level gap."""
    n, w = len(series), max(8, min(100, width // 2))
    a, b = sorted(_spread_positions(rng, n - w, 2, gap=200))
    first, second = (a, a + w - 1), (b, b + w - 1)
    higher = int(rng.integers(2))
    lo, hi = (first, second)[1 - higher], (first, second)[higher]
    # make the chosen interval clearly higher than the other, whatever the baseline does
    gap = series[lo[0]:lo[1] + 1].mean() - series[hi[0]:hi[1] + 1].mean() + rng.uniform(0.8, 1.2)
    series[hi[0]:hi[1] + 1] += gap
    options = [f"[{first[0]}, {first[1]}] is higher", f"[{second[0]}, {second[1]}] is higher"]
    question = (f"Compare the mean level of the series over [{first[0]}, {first[1]}] and over "
                f"[{second[0]}, {second[1]}]. Which is higher?")
    return Task("", "trend", _round(series), question, options, LETTERS[higher], [first, second])


def _changepoint(rng, series, width: int = 64) -> Task:
    n = len(series)
    c = _event_position(rng, n)
    scale_before, scale_after = (0.2, 2.5) if rng.integers(2) else (2.5, 0.2)
    noise = rng.normal(0, 1, n)
    series[:c] += noise[:c] * scale_before
    series[c:] += noise[c:] * scale_after
    evidence = [(max(0, c - 16), min(n - 1, c + 16))]
    return _window_question(rng, series, c, "the volatility of the series change", evidence,
                            "changepoint")


def _multi(rng, series, width: int = 64) -> Task:
    n = len(series)
    p, q = _spread_positions(rng, n, 2, gap=300)
    spike_first = bool(rng.integers(2))
    up, down = (p, q) if spike_first else (q, p)
    ev_up = _spike(series, up, rng.uniform(5, 7))
    ev_down = _spike(series, down, -rng.uniform(5, 7))
    options = ["the upward spike comes first", "the downward dip comes first"]
    question = "The series has one short upward spike and one short downward dip. Which comes first?"
    answer = "A" if spike_first else "B"
    return Task("", "multi", _round(series), question, options, answer, sorted([ev_up, ev_down]))


def _event_position(rng, n: int) -> int:
    """A position whose event lies well inside one of the eight windows."""
    width = n // 8
    window = int(rng.integers(8))
    return window * width + int(rng.integers(8, width - 8))


def _spread_positions(rng, n: int, k: int, gap: int) -> list[int]:
    """k positions in [20, n-20) at least `gap` apart, uniformly: draw k points in the slack
    left after reserving the gaps, then spread them out (no rejection loop to hang on)."""
    gap = min(gap, (n - 40) // max(k, 1))
    slack = n - 40 - gap * (k - 1)
    base = sorted(rng.integers(0, slack, size=k).tolist())
    return [20 + b + i * gap for i, b in enumerate(base)]


def _round(series: np.ndarray) -> list[float]:
    return [round(float(v), 3) for v in series]


_BUILDERS = {"anomaly": _anomaly, "count": _count, "trend": _trend,
             "changepoint": _changepoint, "multi": _multi}

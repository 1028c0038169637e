"""Scripted baselines for the time-series environment.

* `oracle` zooms onto the evidence intervals (privileged) and answers correctly.
* `heuristic` selects segments from the question (the intervals or option windows it names,
  else an even scan) and answers from the values it read, using only the conversation: it is
  the honest baseline a learned policy should beat.
* `random` zooms at random, emits junk now and then, and guesses.
* `guess` zooms exactly where `heuristic` does and answers a uniformly random option: a
  demonstration of the task's form with no answer content, so a model warm-started on it
  knows where to look and which letters are valid, and whatever it answers better than chance
  after RL was learned in RL (docs/demo.md, attempt 12).

Reward attacks (each declares its `ceiling`; `envgym check` and `tests/timeseries/`):

* `hack_overview` makes the obligatory first zoom on two points and answers from the
  opening sketch (the values shown before any zoom): at chance.
* `hack_wide_zoom` asks for the whole series in one zoom, and when that is refused takes the
  widest zoom allowed, then answers from everything it has seen.
* `hack_blind_scan` ignores the question and scans evenly with every round.
* `hack_max_scan` is brute force: maximum-width zooms over the whole series (four at the
  default cap, inside the exploration bonus's 2-4 segment range).
* `hack_junk_zoom` is the oracle padded with a junk 2-point zoom to buy the exploration
  bonus; the bonus is shaping, so on the task reward padding only costs a round.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
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
    """The honest baseline: selects segments from the question, then answers from what it read.

    A question that names where to look (the two intervals of `trend`, the option windows of
    `anomaly` and `changepoint`) gets narrow zooms onto those places, adjacent ones merged up
    to the span cap; a question that does not (`count`, `multi`) gets an even scan. It reads
    only the conversation and the environment's public limits (rounds, span cap, format).
    """

    def act(self, env: Any, messages: list[Message]) -> str:
        text = messages[1]["content"]
        n = int(_LENGTH_RE.search(text)[1])
        seen = _SEGMENT_RE.findall("\n".join(str(m["content"]) for m in messages[2:]))
        plan = _plan(text, n, env.max_rounds, _span_cap(env, n))
        if len(seen) < len(plan) and not getattr(env, "answering", False):
            return _zoom(env, *plan[len(seen)], "Look where the question points.")
        return _answer(self.letter(text, seen, plan, messages), "Answer from what I read.")

    def letter(self, text: str, seen: list, plan: list, messages: list[Message]) -> str:
        """The option the segments read so far support."""
        return _decide(text, _points(seen), covered=plan)


class GuessPolicy(HeuristicPolicy):
    """The heuristic's zooms, then a uniformly random option letter: form without content."""

    def letter(self, text: str, seen: list, plan: list, messages: list[Message]) -> str:
        return str(self.rng.choice(_option_letters(messages)))


def _plan(text: str, n: int, rounds: int, cap: int) -> list[tuple[int, int]]:
    """The segments to read: the places the question names, else an even scan."""
    question = text.split("Question:")[1]
    named = [tuple(map(int, r)) for r in _RANGE_RE.findall(question)]
    if "mean level" in question:
        targets = named[:2]
    elif "In which window" in question:
        targets = named
    else:
        return _even_scan(n, rounds, cap)
    return _merge(sorted(targets), cap)[:max(1, rounds)]


def _even_scan(n: int, rounds: int, cap: int) -> list[tuple[int, int]]:
    width = min(n // max(1, rounds), cap)
    starts = np.linspace(0, n - width, max(1, rounds)).astype(int)
    return [(int(s), int(s) + width - 1) for s in starts]


def _merge(ranges: list[tuple[int, int]], cap: int) -> list[tuple[int, int]]:
    """Join touching ranges while the union stays within one zoom's span cap."""
    out: list[tuple[int, int]] = []
    for lo, hi in ranges:
        hi = min(hi, lo + cap - 1)
        if out and lo <= out[-1][1] + 1 and hi - out[-1][0] + 1 <= cap:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


class HackBlindScanPolicy(ScriptedPolicy):
    """Attack: ignore the question and scan the series evenly with every round, then answer
    from whatever the scan showed. Segment selection must beat not selecting."""

    ceiling = Ceiling("heuristic", metrics=("mean_reward", "success_rate"),
                      why="wide zooms are down-sampled: a scan shows no detail")

    def act(self, env: Any, messages: list[Message]) -> str:
        text = messages[1]["content"]
        n = int(_LENGTH_RE.search(text)[1])
        seen = _SEGMENT_RE.findall("\n".join(str(m["content"]) for m in messages[2:]))
        plan = _even_scan(n, env.max_rounds, _span_cap(env, n))
        if len(seen) < len(plan) and not getattr(env, "answering", False):
            return _zoom(env, *plan[len(seen)], "Scan on.")
        return _answer(_decide(text, _points(seen)), "Answer from the scanned values.")


class HackMaxScanPolicy(ScriptedPolicy):
    """Attack: brute force. Cover the series with maximum-width zooms (four at the default
    quarter cap, which also lands in the exploration bonus's 2-4 segment range), then
    answer from every value read."""

    ceiling = Ceiling("heuristic", metrics=("mean_reward", "success_rate"),
                      why="wide zooms are down-sampled and the bonus is shaping, not task reward")

    def act(self, env: Any, messages: list[Message]) -> str:
        text = messages[1]["content"]
        n = int(_LENGTH_RE.search(text)[1])
        cap = _span_cap(env, n)
        plan = [(s, min(n - 1, s + cap - 1)) for s in range(0, n, cap)][:max(1, env.max_rounds)]
        seen = _SEGMENT_RE.findall("\n".join(str(m["content"]) for m in messages[2:]))
        if len(seen) < len(plan) and not getattr(env, "answering", False):
            return _zoom(env, *plan[len(seen)], "Read it all.")
        return _answer(_decide(text, _points(seen)), "Answer from everything.")


class HackJunkZoomPolicy(ScriptedPolicy):
    """Attack: the oracle's evidence zooms padded with junk 2-point zooms up to the
    exploration bonus's two unique segments. Padding must never raise the task reward."""

    ceiling = Ceiling("oracle", margin=-0.03, metrics=("mean_reward",),
                      why="the exploration bonus is shaping; a junk round only costs")

    def act(self, env: Any, messages: list[Message]) -> str:
        task, done = env.task, len(env.segments)
        n = len(task.series)
        plan = [(max(0, s - 8), min(n - 1, e + 8)) for s, e in task.evidence][:env.max_rounds]
        if len(set(plan)) < 2 and len(plan) < env.max_rounds:
            plan.append((n - 2, n - 1) if plan[0] != (n - 2, n - 1) else (0, 1))
        if done < len(plan) and not env.answering:
            return _zoom(env, *plan[done], "Inspect.")
        return _answer(task.answer)


class HackOverviewPolicy(ScriptedPolicy):
    """Attack: a token first zoom, then the answer read off the opening sketch."""

    ceiling = Ceiling("heuristic", margin=-0.2, metrics=("mean_reward", "success_rate"),
                      caps=(("metrics.above_chance", 0.08),),
                      why="the sketch is compensated: reading it alone is chance")

    def act(self, env: Any, messages: list[Message]) -> str:
        if not env.segments and not env.answering:
            return _zoom(env, 0, 1, "Formality.")
        sketch = _SEGMENT_RE.findall(messages[1]["content"])
        return _answer(_decide(messages[1]["content"], _points(sketch)), "From the overview.")


class HackWideZoomPolicy(ScriptedPolicy):
    """Attack: one whole-series zoom (the widest allowed when refused), then answer."""

    ceiling = Ceiling("heuristic", margin=-0.2, metrics=("mean_reward", "success_rate"),
                      why="one zoom covers at most a quarter of the series")

    def act(self, env: Any, messages: list[Message]) -> str:
        text = messages[1]["content"]
        n = int(_LENGTH_RE.search(text)[1])
        if not env.segments and not env.answering:
            tried = any("Invalid action" in str(m["content"]) for m in messages[2:])
            return _zoom(env, 0, _span_cap(env, n) - 1 if tried else n - 1, "See it all.")
        seen = _SEGMENT_RE.findall("\n".join(str(m["content"]) for m in messages[1:]))
        return _answer(_decide(text, _points(seen)), "From the wide view.")


def _span_cap(env: Any, n: int) -> int:
    """The widest zoom the environment accepts (its `max_zoom_span`, else a quarter)."""
    return getattr(env, "max_zoom_span", None) or max(2, n // 4)


def _option_letters(messages: list[Message]) -> list[str]:
    return re.findall(r"^([A-H])\) ", messages[1]["content"], re.M)


@dataclass
class Reading:
    """Everything read so far, one entry per value shown: position, value, residual against
    its own segment's running median (two zooms are not one contiguous series), the pooling
    step the value stands for, and which segment it came from."""

    pos: np.ndarray
    val: np.ndarray
    resid: np.ndarray
    step: np.ndarray
    seg: np.ndarray


def _points(seen: list[tuple[str, ...]]) -> Reading:
    pos, val, res, steps, seg = [], [], [], [], []
    for k, (start, _end, _count, step, values) in enumerate(seen):
        vals = np.array([float(v) for v in values.split()])
        pos += [int(start) + (i + 0.5) * float(step) for i in range(len(vals))]
        val += vals.tolist()
        res += (vals - _smooth(vals)).tolist()
        steps += [float(step)] * len(vals)
        seg += [k] * len(vals)
    return Reading(*map(np.array, (pos, val, res, steps, seg)))


SPIKE_MASS = 13.2  # tasks.py: a spike adds height x (0.6 + 1 + 0.6), height about 6


def _decide(text: str, r: Reading, covered: list[tuple[int, int]] | None = None) -> str:
    """Answer from the values read, by question type. A window question whose evidence was
    not found in the windows read guesses among the windows not read."""
    options = re.findall(r"^([A-H])\) (.*)$", text, re.M)
    if not len(r.val):
        return options[0][0]
    threshold = min(2.0, 0.4 * SPIKE_MASS / float(r.step.max()))  # half a pooled spike
    unread = [o for o in options if covered is not None and not _inside(o[1], covered)]
    if "volatility" in text:
        lo, hi, _ = _change(r)
        between = [o for o in unread if _within(o[1], lo, hi)]
        return between[0][0] if between else _window_containing(options, (lo + hi) / 2)
    if "How many" in text:
        peaks = _peaks(r.resid, threshold)
        return options[min(len(peaks), 4) - 1][0] if peaks else "A"
    if "Which comes first" in text:
        return "A" if r.pos[int(np.argmax(r.resid))] < r.pos[int(np.argmin(r.resid))] else "B"
    if "mean level" in text:
        (a0, a1), (b0, b1) = [tuple(map(int, x)) for x in _RANGE_RE.findall(text.split("Question:")[1])[:2]]
        return "A" if _level(r.pos, r.val, a0, a1) >= _level(r.pos, r.val, b0, b1) else "B"
    best = int(np.argmax(np.abs(r.resid)))
    if unread and abs(r.resid[best]) < threshold:
        return unread[0][0]
    return _window_containing(options, r.pos[best])


def _change(r: Reading) -> tuple[float, float, float]:
    """Where the volatility changes: the best calm/volatile split of the jumps between
    neighbouring values of one segment (a jump across two zooms' gap means nothing), in
    position order. Returns the two positions the split falls between and its score."""
    order = np.argsort(r.pos, kind="stable")
    pos, val, seg = r.pos[order], r.val[order], r.seg[order]
    inner = np.flatnonzero(np.r_[False, seg[1:] == seg[:-1]])
    if len(inner) < 4:
        mid = float(pos[len(pos) // 2])
        return mid, mid, -np.inf
    jumps = np.abs(val[inner] - val[inner - 1])
    k, score = _best_split(jumps, with_score=True)
    return float(pos[inner[k - 1]]), float(pos[inner[k] - 1]), float(score)


def _within(option: str, lo: float, hi: float) -> bool:
    """The option's window lies in the unread gap between positions lo and hi."""
    match = _RANGE_RE.search(option)
    return bool(match) and lo <= int(match[1]) and int(match[2]) <= hi


def _inside(option: str, covered: list[tuple[int, int]]) -> bool:
    match = _RANGE_RE.search(option)
    if not match:
        return True
    lo, hi = int(match[1]), int(match[2])
    return any(a <= lo and hi <= b for a, b in covered)


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


def _best_split(jumps: np.ndarray, with_score: bool = False):
    """Index that best separates a calm stretch from a volatile one (max log-variance gap),
    and with `with_score` the gap itself."""
    best, best_score = len(jumps) // 2, -np.inf
    edge = min(8, max(1, len(jumps) // 8))
    for k in range(edge, len(jumps) - edge + 1):
        score = abs(np.log(jumps[:k].mean() + 1e-6) - np.log(jumps[k:].mean() + 1e-6))
        if score > best_score:
            best, best_score = k, score
    return (best, best_score) if with_score else best


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

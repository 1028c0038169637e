"""Window items of the base corpus (version 3) whose stretches say nothing by where they are.

Version 2's `bump_window` and `spread_change` showed only the stretch that held the event (plus,
half the time, one distractor), so the *position* of the readings named the answer: a reader
that ignores every value and picks the option covered by a shown stretch scores 0.77 on
`bump_window` (chance 0.25) and 0.96 on `spread_change` from the stretch's midpoint. The 63M-
token version-2 base scored 0.63 on the bump probe and then read the demo's anomaly tasks at
chance even after 3,000 of their answers (docs/demo.md, attempt 6): there a policy zooms onto
*every* option window the question names, so position carries nothing and only the values do.

Here every option window is shown (or three of the four, the fourth then being the answer
exactly when no shown stretch holds the event), adjacent windows merged into one stretch of at
most 128 points and read as 8 pooled values, the way a span-capped zoom reads them. A blind
positional reader is then at chance (`tests/agents/test_base_corpus.py` checks both numbers), so
the only way to lower the loss on the answer letter is to read the values. Half the questions
also open with a coarse overview of the whole row taken *before* the event was added, so it
says nothing either, and a model learns to look past it. The wording is this module's own; the
leakage test covers this version like the others.
"""

from __future__ import annotations

import random

from envgym.agents.base_corpus_lists import _LETTERS, Item, _bump, _readout, _signal, _windows

__all__ = ["READ_ITEMS", "REPLACED"]

SPAN_CAP = 128  # the most points one stretch covers: a zoom's span cap


def _merge(ranges: list[tuple[int, int]], cap: int = SPAN_CAP) -> list[tuple[int, int]]:
    """Join touching ranges while the union stays within `cap` points."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo == out[-1][1] + 1 and hi - out[-1][0] + 1 <= cap:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _option_windows(rng: random.Random, n: int, right: int) -> tuple[list[int], str, str]:
    """Four window indices in order including `right`, their lettered text, the right letter."""
    windows = _windows(n)
    chosen = sorted([right, *rng.sample([i for i in range(8) if i != right], 3)])
    text = "\n".join(f"{_LETTERS[j]}) [{windows[i][0]}, {windows[i][1]}]"
                     for j, i in enumerate(chosen))
    return chosen, text, _LETTERS[chosen.index(right)]


def _overview(rng: random.Random, before: list[float], question: str) -> str:
    """Half the time, a coarse 8-value view of the row *before* the event, then the question."""
    if rng.random() < 0.5:
        return question
    n, step = len(before), len(before) // 8
    vals = " ".join(f"{sum(before[i * step:(i + 1) * step]) / step:.2f}" for i in range(8))
    return f"A row of {n} readings. Coarse view, {step} points per value:\n{vals}\n{question}"


def bump_read(rng: random.Random) -> Item:
    """Which lettered window holds a row's single bump, with every option window read.

    All four windows (or three, the bump then possibly in the one not read) are shown as pooled
    readings, so the answer is where one reading stands out from its neighbours, turned into an
    index and then into a lettered range; where the stretches lie names nothing."""
    n = rng.choice([256, 512, 1024])
    signal, windows, w = _signal(rng, n), _windows(n), rng.randrange(8)
    before = list(signal)
    pos = windows[w][0] + rng.randint(2, windows[w][1] - windows[w][0] - 4)
    _bump(signal, pos, rng.choice([-1, 1]) * rng.uniform(5, 7))
    chosen, options, letter = _option_windows(rng, n, w)
    read = chosen if rng.random() < 0.5 else sorted(rng.sample(chosen, 3))
    shown = [(a, b, _readout(rng, signal, a, b)) for a, b in _merge([windows[i] for i in read])]
    q = rng.choice(["Which range holds the bump?", "Where is the short outlier?",
                    "One short burst stands out. In which range is it?"])
    think = (f"The burst is near {pos}." if w in read
             else "No stretch I read has it, so it is in the one I did not read.")
    return shown, _overview(rng, before, q), options, letter, think


def spread_read(rng: random.Random) -> Item:
    """In which lettered window the spread switches between calm and wild, every option read.

    Pooled readings of a wild stretch still swing while calm ones barely move; the answer is
    the window whose own readings switch, between calm and wild neighbours."""
    n = rng.choice([256, 512])
    windows, w = _windows(n), rng.randrange(8)
    c = windows[w][0] + rng.randint(2, windows[w][1] - windows[w][0] - 2)
    calm, wild = rng.uniform(0.05, 0.15), rng.uniform(1.5, 2.5)
    before_c, after_c = (calm, wild) if rng.random() < 0.5 else (wild, calm)
    signal = [rng.gauss(0, before_c if t < c else after_c) for t in range(n)]
    chosen, options, letter = _option_windows(rng, n, w)
    shown = [(a, b, _readout(rng, signal, a, b)) for a, b in _merge([windows[i] for i in chosen])]
    q = rng.choice(["Where does the spread of the values change?",
                    "In which range do the swings switch size?"])
    return shown, _overview(rng, signal, q), options, letter, f"The swings change near {c}."


READ_ITEMS = {"bump_read": (4.0, bump_read), "spread_read": (1.0, spread_read)}
REPLACED = ("bump_window", "spread_change")
"""The version-2 items these replace: version 3 drops them, since they teach the shortcut."""

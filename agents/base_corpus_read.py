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

Version 4 adds the two rungs under `bump_read` (`RUNG_ITEMS`): `standout`, one stretch whose
quarters are the options, and `per_window`, four stretches, one per option. Under direct
supervision on answer letters the 1.1M shape learns `standout` within 6,000 items and then
`per_window` within 6,000 more, while `bump_read` alone stays at chance after 12,000
(`bench/read_learnability.py`, docs/demo.md attempt 7); pretraining on the rungs gives the
composed item a ladder to climb.
"""

from __future__ import annotations

import random

from envgym.agents.base_corpus_lists import _LETTERS, Item, _bump, _readout, _signal, _windows

__all__ = ["READ_ITEMS", "REPLACED", "RUNG_ITEMS"]

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


def standout(rng: random.Random) -> Item:
    """The primitive under `bump_read`, alone: one 128-point stretch of a 1,024-point row read
    as 8 pooled values with one bump in it, and four options that split the stretch in
    quarters. No mapping between stretches and windows is needed, only which reading stands
    out from its neighbours, and where in the stretch that reading lies."""
    n = 1024
    signal, lo = _signal(rng, n), rng.randrange(0, n - 128, 16)
    pos = lo + rng.randint(2, 124)
    _bump(signal, pos, rng.choice([-1, 1]) * rng.uniform(5, 7))
    quarters = [(lo + 32 * q, lo + 32 * q + 31) for q in range(4)]
    options = "\n".join(f"{_LETTERS[q]}) [{a}, {b}]" for q, (a, b) in enumerate(quarters))
    letter = _LETTERS[min(3, (pos + 1 - lo) // 32)]
    return ([(lo, lo + 127, _readout(rng, signal, lo, lo + 127))],
            "Which range holds the bump?", options, letter, f"The burst is near {pos}.")


def per_window(rng: random.Random) -> Item:
    """One rung up from `standout`: a 1,024-point row whose four option windows (128 points
    each) are shown as four stretches of 8 pooled readings, one per option and in order; no
    overview, no merged stretch, no window left unread. The answer is the stretch whose own
    readings hold the one that stands out, so the options map one to one onto stretches."""
    signal, windows, w = _signal(rng, 1024), _windows(1024), rng.randrange(8)
    pos = windows[w][0] + rng.randint(2, 124)
    _bump(signal, pos, rng.choice([-1, 1]) * rng.uniform(5, 7))
    chosen, options, letter = _option_windows(rng, 1024, w)
    shown = [(*windows[i], _readout(rng, signal, *windows[i])) for i in chosen]
    return shown, "Which range holds the bump?", options, letter, f"The burst is near {pos}."


RUNG_ITEMS = {"standout": (3.0, standout), "per_window": (3.0, per_window)}
"""Version 4's additions: the rungs under `bump_read`, weighted to match it (chosen before any
version-4 run)."""

"""List-level reading skills of the base corpus (version 2): where is a row's bump, which stretch
sits higher, how many bumps, which comes first, where does the spread change.

Version 1 taught number-level skills (compare two values, find a list's extreme, match a number
to a lettered range). The demo's development runs (docs/demo.md, attempts 3 and 4) showed that
they do not compose on their own: a model that compares numbers still answers a question about a
*row of mean-pooled readings* at chance, and an answer-letter fine-tune on thousands of the
environment's own tasks taught it to compare two stretches' levels but never to find a bump.
Each generator below writes one such composition out in full: a signal is drawn (a slow wave, a
drift and noise, so a bump has to stand out from its neighbours rather than be the largest
value), one or two stretches of it are shown as pooled readings the way a zoom tool reports a
segment, and the question asks for a lettered range or a count. The wording is this module's
own; no environment is imported, and the leakage test checks that no held-out task's question,
options or overview occurs in the corpus.
"""

from __future__ import annotations

import random
from collections.abc import Callable

__all__ = ["LIST_ITEMS", "LIST_SKILLS", "Item", "as_question"]

_LETTERS = "ABCD"
_THINKS = ["Read the readings.", "Find the one that stands out.", "Compare the stretches.",
           "Look at each stretch."]


def _signal(rng: random.Random, n: int) -> list[float]:
    """A slow wave plus a drift plus noise: local structure a bump must stand out from."""
    import math
    period, phase = rng.uniform(n / 4, n / 1.5), rng.uniform(0, 2 * math.pi)
    amp, drift, noise = rng.uniform(0.5, 1.5), rng.uniform(-1, 1), rng.uniform(0.2, 0.5)
    return [amp * math.sin(2 * math.pi * t / period + phase) + drift * t / n + rng.gauss(0, noise)
            for t in range(n)]


def _bump(signal: list[float], pos: int, height: float) -> None:
    for k, w in enumerate((0.6, 1.0, 0.6)):
        if pos + k < len(signal):
            signal[pos + k] += height * w


def _readout(rng: random.Random, signal: list[float], lo: int, hi: int, k: int = 8) -> str:
    """Stretch [lo, hi] as k mean-pooled readings, in one of three frames."""
    step = (hi - lo + 1) // k
    means = [sum(signal[lo + i * step:lo + (i + 1) * step]) / step for i in range(k)]
    vals = " ".join(f"{v:.2f}" for v in means)
    return rng.choice([f"segment [{lo}, {hi}]: {k} values, step {step}\n{vals}",
                       f"Readings of [{lo}, {hi}], one per {step} points: {vals}",
                       f"[{lo}, {hi}] averaged in blocks of {step}: {vals}"])


def _windows(n: int) -> list[tuple[int, int]]:
    w = n // 8
    return [(i * w, (i + 1) * w - 1) for i in range(8)]


def _options(rng: random.Random, windows: list[tuple[int, int]], right: int
             ) -> tuple[str, str]:
    """Four lettered windows (in order) including `right`: (the options text, its letter)."""
    chosen = sorted([right, *rng.sample([i for i in range(len(windows)) if i != right], 3)])
    text = "\n".join(f"{_LETTERS[j]}) [{windows[i][0]}, {windows[i][1]}]"
                     for j, i in enumerate(chosen))
    return text, _LETTERS[chosen.index(right)]


def _shown(rng: random.Random, n: int, must: list[int]) -> list[tuple[int, int]]:
    """One or two stretches of 64 or 128 points that contain every position in `must`."""
    width = rng.choice([64, 64, 128])  # aligned blocks of one width: two are equal or disjoint
    out = sorted({(pos // width * width, pos // width * width + width - 1) for pos in must})
    if len(out) == 1 and rng.random() < 0.5:  # a second, uninformative stretch as a distractor
        lo = rng.randrange(0, n, width)
        if lo != out[0][0]:
            out.append((lo, lo + width - 1))
    rng.shuffle(out)
    return out


Shown = list[tuple[int, int, str]]
Item = tuple[Shown, str, str, str, str]
"""(the stretches shown as (start, end, readout), the question, the lettered options, the right
letter, a think that names the evidence)."""


def as_question(item: Item) -> str:
    """The item as one user message: the readouts, the question, the options."""
    shown, question, options, _, _ = item
    return "\n".join([*(text for _, _, text in shown), question, options])


def _doc(item_fn: Callable[[random.Random], Item]) -> Callable[[random.Random], str]:
    """A corpus generator from an item generator, in one of two frames: the whole item as one
    question (`_qa`), or a tool dialogue, where the user asks, the assistant calls a tool on
    each stretch (a tag named by the system message, drawn from the corpus's tool names), the
    tool answers with the readout and the assistant answers with the letter: the shape of a
    multi-turn episode, so reading is learned where the readings arrive as tool replies.
    The probes (`base_probes`) draw the same items from their own stream, without the answer."""
    def generate(rng: random.Random) -> str:
        from envgym.agents.base_corpus import _TAGS, _qa, chatml
        item = item_fn(rng)
        shown, question, options, letter, think = item
        think = think if rng.random() < 0.5 else rng.choice(_THINKS)
        if rng.random() < 0.5:
            return _qa(rng, as_question(item), letter, think)
        tag = rng.choice(_TAGS)
        system = (f"Inspect a stretch with <{tag}>[START, END]</{tag}>; answer with "
                  "<answer>LETTER</answer>.")
        header = rng.choice(["", "Options:\n"])
        turns = [("user", f"{question}\n{header}{options}")]
        for lo, hi, text in shown:
            call = f"<think>{rng.choice(_THINKS)}</think><{tag}>[{lo}, {hi}]</{tag}>"
            turns += [("assistant", call),
                      ("tool", text)]
        turns.append(("assistant", f"<think>{think}</think><answer>{letter}</answer>"))
        return chatml(system, turns)
    generate.__doc__, generate.__name__ = item_fn.__doc__, item_fn.__name__
    return generate


def bump_window(rng: random.Random) -> Item:
    """Which lettered window holds a row's single bump (up or down), from pooled readings.

    A short spike averaged into a reading raises it above its neighbours by well under the
    spike's height; finding it means comparing each reading with the ones around it, turning
    its position into an index (start + i x step) and that index into a lettered range."""
    n = rng.choice([256, 512, 1024])
    signal, windows = _signal(rng, n), _windows(n)
    w = rng.randrange(8)
    pos = windows[w][0] + rng.randint(4, windows[w][1] - windows[w][0] - 6)
    _bump(signal, pos, rng.choice([-1, 1]) * rng.uniform(5, 7))
    shown = [(a, b, _readout(rng, signal, a, b)) for a, b in _shown(rng, n, [pos])]
    options, letter = _options(rng, windows, w)
    q = rng.choice(["Which range holds the bump?", "Where is the short outlier?",
                    "One short burst stands out. In which range is it?"])
    return shown, q, options, letter, f"The burst is near {pos}."


def higher_stretch(rng: random.Random) -> Item:
    """Which of two named stretches has the higher mean level, from their pooled readings.

    The gap is set on top of a wave and a drift, so a single reading can mislead and the
    answer is a comparison of two rows' averages, not of two numbers."""
    n = rng.choice([256, 512, 1024])
    signal, width = _signal(rng, n), rng.choice([16, 32, 64])
    a = rng.randrange(0, n // 2 - width)
    b = rng.randrange(n // 2, n - width)
    first, second = (a, a + width - 1), (b, b + width - 1)
    hi = rng.randrange(2)
    lo_s, hi_s = (first, second)[1 - hi], (first, second)[hi]
    mean = lambda s: sum(signal[s[0]:s[1] + 1]) / width  # noqa: E731
    gap = mean(lo_s) - mean(hi_s) + rng.uniform(0.8, 1.2)
    for t in range(hi_s[0], hi_s[1] + 1):
        signal[t] += gap
    shown = [(s, e, _readout(rng, signal, s, e)) for s, e in (first, second)]
    options = f"A) [{first[0]}, {first[1]}]\nB) [{second[0]}, {second[1]}]"
    q = rng.choice(["Which stretch sits higher on average?", "Which range has the higher level?"])
    return shown, q, options, "AB"[hi], f"[{hi_s[0]}, {hi_s[1]}] is higher."


def count_bumps(rng: random.Random) -> Item:
    """How many upward bumps the shown readings contain (1 to 4), as a lettered count.

    Counting events means finding every reading that stands out, not only the largest one,
    and holding the tally across two rows of readings."""
    n = rng.choice([256, 512])
    signal, k = _signal(rng, n), rng.randint(1, 4)
    slots = rng.sample(range(8), k)
    for s in slots:
        _bump(signal, s * n // 8 + rng.randint(8, n // 8 - 8), rng.uniform(5, 7))
    half = n // 2
    shown = [(a, a + half - 1, _readout(rng, signal, a, a + half - 1, 16)) for a in (0, half)]
    options = "\n".join(f"{_LETTERS[i]}) {i + 1}" for i in range(4))
    q = rng.choice(["How many upward bumps are there?", "Count the short upward bursts."])
    return shown, q, options, _LETTERS[k - 1], f"I count {k}."


def first_event(rng: random.Random) -> Item:
    """Of one upward bump and one downward dip, which comes first along the row.

    Two events of opposite sign, possibly in two stretches shown out of order of position:
    the answer needs each event's index, then a comparison of the two."""
    n = rng.choice([256, 512, 1024])
    signal = _signal(rng, n)
    p, q = sorted(rng.sample(range(16, n - 16), 2))
    while q - p < n // 4:
        p, q = sorted(rng.sample(range(16, n - 16), 2))
    up_first = rng.random() < 0.5
    _bump(signal, p, rng.uniform(5, 7) * (1 if up_first else -1))
    _bump(signal, q, rng.uniform(5, 7) * (-1 if up_first else 1))
    shown = [(a, b, _readout(rng, signal, a, b)) for a, b in sorted(_shown(rng, n, [p, q]))]
    options = "A) the bump up\nB) the dip down"
    first = "the bump" if up_first else "the dip"
    return shown, "Which comes first?", options, "A" if up_first else "B", \
        f"{first.capitalize()} is at {p}."


def spread_change(rng: random.Random) -> Item:
    """In which lettered window the row's spread switches from calm to wild or back.

    Read at full resolution (step 1 or 2): the change is in the size of the swings, not in
    their level."""
    n = rng.choice([128, 256])
    windows = _windows(n)
    w = rng.randrange(8)
    c = windows[w][0] + rng.randint(2, windows[w][1] - windows[w][0] - 2)
    before, after = (0.1, 2.0) if rng.random() < 0.5 else (2.0, 0.1)
    signal = [rng.gauss(0, before if t < c else after) for t in range(n)]
    step = rng.choice([1, 2])
    lo = max(0, min(n - 16 * step, c - 8 * step))
    shown = [(lo, lo + 16 * step - 1, _readout(rng, signal, lo, lo + 16 * step - 1, 16))]
    options, letter = _options(rng, windows, w)
    return (shown, "Where does the spread of the values change?", options, letter,
            f"The swings change near {c}.")


LIST_ITEMS = {"bump_window": (2.5, bump_window), "higher_stretch": (1.5, higher_stretch),
              "count_bumps": (1.0, count_bumps), "first_event": (1.0, first_event),
              "spread_change": (1.0, spread_change)}
LIST_SKILLS = {name: (weight, _doc(fn)) for name, (weight, fn) in LIST_ITEMS.items()}

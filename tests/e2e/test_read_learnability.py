"""bench/read_learnability.py (docs/demo.md, attempt 7) and its rungs, corpus version 4's
`RUNG_ITEMS`: they are right by their own evidence, only their values answer them, and a run
fine-tunes the letter and reports it."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envgym.agents.base_corpus import skills
from envgym.agents.base_corpus_read import RUNG_ITEMS

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("name", ["standout", "per_window"])
def test_rungs_are_right_by_evidence_and_blind_to_position(name):
    """The bump's peak lies in the answer's range, and the four options split what is shown
    evenly (quarters of one stretch, or one stretch each), so where the readings are says
    nothing: every option is covered, and each letter is the answer about a quarter of the time."""
    fn, letters = RUNG_ITEMS[name][1], []
    assert name in skills(4) and name not in skills(3)
    for i in range(400):
        shown, _, options, letter, think = fn(random.Random(f"t:{name}:{i}"))
        ranges = {c: tuple(map(int, r)) for c, *r in
                  re.findall(r"^([A-D])\) \[(\d+), (\d+)\]", options, re.M)}
        peak = int(re.search(r"near (\d+)", think).group(1)) + 1
        lo, hi = ranges[letter]
        assert lo <= peak <= hi
        assert all(any(s <= a and b <= e for s, e, _ in shown) for a, b in ranges.values())
        letters.append(letter)
    assert all(60 < letters.count(c) < 140 for c in "ABCD"), letters


def test_a_run_trains_the_letter_and_reports_before_and_after(tmp_path):
    """A few items through the shipped base: blocks of letter loss, both probe scores, and the
    saved model that a curriculum's next rung starts from."""
    out = subprocess.run(
        [sys.executable, str(BENCH / "read_learnability.py"), "agents/base_weights",
         "--item", "standout", "--n", "32", "--block", "16", "--probe-n", "4",
         "--save", str(tmp_path / "m")],
        cwd=BENCH.parent, capture_output=True, text=True, timeout=300, check=True)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert [r["items"] for r in rows if "letter_loss" in r] == [16, 32]
    assert all(0 < r["letter_loss"] < 10 for r in rows if "letter_loss" in r)
    assert 0 <= rows[-1]["probe_after"] <= 1 and rows[-1]["items"] == 32
    assert (tmp_path / "m" / "config.json").is_file()

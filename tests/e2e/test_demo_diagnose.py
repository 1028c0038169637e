"""bench/demo_diagnose.py's `stats` (docs/demo.md, development attempt 3): the numbers the
diagnosis rests on are computed as it says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import demo_diagnose  # noqa: E402


def _row(step, seed, reward, coverage, answer="A", score=0.0, zoom="[1, 2]"):
    return {"step": step, "seed": seed, "R": reward,
            "out": {"answer": answer, "score": score, "chance": 0.25, "coverage": coverage},
            "acts": [f"<think>x</think><zoom>{zoom}</zoom>", f"<answer>{answer}</answer>"]}


def test_one_accuracy_groups_with_cost_spread_get_unit_advantages():
    """Eight rollouts all wrong, rewards apart by 0.001 (a wider zoom's point cost): the group
    is kept (spread > 0), counted as one-accuracy, and its covering rollouts, the costlier
    ones, get a z-scored advantage of about -0.9; an all-equal group is left out."""
    flat = [_row(1, 7, 3.0 - 0.001 * (i < 4), coverage=0.5 * (i < 4)) for i in range(8)]
    tied = [_row(1, 8, 3.0, coverage=0.0) for _ in range(8)]
    (stats,) = demo_diagnose.block_stats(flat + tied)
    assert stats["groups"] == 2 and stats["groups_one_accuracy_trained"] == 1
    assert stats["adv_covering"] == pytest.approx(-0.935, abs=0.01)
    assert stats["adv_not_covering"] == pytest.approx(0.935, abs=0.01)
    assert stats["covering"] == pytest.approx(4 / 16)
    assert stats["above_chance"] == pytest.approx(-0.25)


def test_blocks_split_steps_and_count_zooms():
    rows = [_row(s, 1, float(i), 0.0, answer="AB"[i % 2], score=float(i % 2), zoom=f"[{i}, 9]")
            for s in (1, 11) for i in range(4)]
    first, second = demo_diagnose.block_stats(rows)
    assert (first["steps"], second["steps"]) == ("1-10", "11-20")
    assert first["distinct_first_zooms"] == 4 and first["a_share"] == 0.5
    assert first["groups_one_accuracy_trained"] == 0  # accuracies differ within the group

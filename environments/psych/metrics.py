"""Aggregate consultation metrics: accuracy and macro-F1 (four-way and fine), turns, checks
resolved, repeated questions, safety misses. Undiagnosed episodes count as wrong."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from envgym.environments.psych.knowledge import FOUR_WAY


def macro_f1(true: Sequence[Iterable[str]], pred: Sequence[Iterable[str]]) -> float:
    """Macro-F1 over classes seen in either labels or predictions; sets allow multi-label."""
    true_sets, pred_sets = [set(t) for t in true], [set(p) for p in pred]
    classes = sorted(set().union(*true_sets, *pred_sets)) if true_sets else []
    scores = []
    for c in classes:
        tp = sum(c in t and c in p for t, p in zip(true_sets, pred_sets))
        fp = sum(c not in t and c in p for t, p in zip(true_sets, pred_sets))
        fn = sum(c in t and c not in p for t, p in zip(true_sets, pred_sets))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    return float(np.mean(scores)) if scores else 0.0


def summarize(outcomes: list[dict[str, Any]]) -> dict[str, float]:
    if not outcomes:
        return {}
    mean = lambda key: float(np.mean([float(o.get(key, 0)) for o in outcomes]))  # noqa: E731
    true4 = [{o["label"]} for o in outcomes]
    pred4 = [{o["predicted"]} if o.get("predicted") in FOUR_WAY else set() for o in outcomes]
    return {
        "accuracy": mean("correct_four_way"),
        "macro_f1": macro_f1(true4, pred4),
        "accuracy_fine": mean("correct_fine"),
        "macro_f1_fine": macro_f1([o["labels_fine"] for o in outcomes],
                                  [o.get("predicted_fine", []) for o in outcomes]),
        "success": mean("success"),
        "diagnosis_rate": mean("diagnosed"),
        "mean_turns": mean("turns"),
        "missing_resolved": mean("missing_resolved"),
        "entropy_reduction": mean("entropy_reduction"),
        "repeated_questions": mean("repeated_questions"),
        "off_track": mean("off_track"),
        "safety_miss_rate": mean("safety_missed"),
        "episodes": float(len(outcomes)),
    }

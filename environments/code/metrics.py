"""Aggregate metrics of CodeRefine episodes: pass@k, refinement gain, rounds, verdicts."""

from __future__ import annotations

from collections import Counter, defaultdict
from math import comb
from typing import Any

__all__ = ["pass_at_k", "summarize_outcomes"]

K_VALUES = (1, 2, 4, 5, 8, 10, 16, 20, 50, 100)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimator 1 - C(n-c, k) / C(n, k) from n samples with c correct (Codex)."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def summarize_outcomes(outcomes: list[dict[str, Any]]) -> dict[str, float]:
    """pass@k over tasks (k up to the smallest number of samples per task), first-attempt and
    final pass rates and their difference, mean rounds, and the share of each final verdict."""
    if not outcomes:
        return {}
    n = len(outcomes)
    mean = lambda key: sum(float(o.get(key, 0)) for o in outcomes) / n  # noqa: E731
    metrics = {"success": mean("success"), "score": mean("score"),
               "first_attempt_pass": mean("first_attempt_pass"), "final_pass": mean("final_pass"),
               "rounds": mean("rounds"), "public_pass": mean("public_pass"),
               "sandbox_error": mean("sandbox_error")}
    metrics["refinement_gain"] = metrics["final_pass"] - metrics["first_attempt_pass"]
    by_task: dict[str, list[bool]] = defaultdict(list)
    for i, o in enumerate(outcomes):
        by_task[str(o.get("task_id", i))].append(bool(o.get("final_pass", o.get("success"))))
    fewest = min(len(v) for v in by_task.values())
    for k in K_VALUES:
        if k <= fewest:
            metrics[f"pass@{k}"] = sum(pass_at_k(len(v), sum(v), k) for v in by_task.values()) \
                / len(by_task)
    for verdict, count in Counter(str(o.get("verdict", "none")) for o in outcomes).items():
        metrics[f"verdict/{verdict}"] = count / n
    return metrics

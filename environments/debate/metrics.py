"""Episode outcomes and the debate's aggregate metrics.

Each agent's final `info[agent]["outcome"]` holds the whole episode (every agent's initial and
final correctness, mode, difficulty bucket, consensus), so `summarize` gives the same per-agent
numbers whether it gets one outcome per episode or one per agent per episode (duplicating every
episode the same number of times leaves every mean unchanged).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

__all__ = ["episode_outcomes", "summarize_outcomes"]


def episode_outcomes(initial: dict[str, bool], final: dict[str, bool], *, mode: str,
                     level: int | None, bucket: str, consensus: bool,
                     p_success: dict[str, float], invalid: dict[str, int],
                     returns: dict[str, float] | None = None,
                     calibrated: dict[str, float] | None = None) -> dict[str, dict]:
    """One outcome dict per agent; `success`/`score` are that agent's final correctness.
    `returns` and `calibrated` (every agent's episode return and calibrated reward) let the
    summary report reward per agent, so an attack on a partner shows in both seats."""
    shared = {"mode": mode, "level": level, "bucket": bucket, "consensus": consensus,
              "initial": dict(initial), "final": dict(final), "p_success": dict(p_success),
              "returns": dict(returns or {}), "calibrated": dict(calibrated or {})}
    return {a: {"success": bool(final[a]), "score": float(final[a]), "agent": a,
                "initial_correct": bool(initial[a]), "final_correct": bool(final[a]),
                "changed_answer_right_to_wrong": bool(initial[a] and not final[a]),
                "invalid_actions": int(invalid[a]), **shared} for a in final}


def summarize_outcomes(outcomes: list[dict[str, Any]]) -> dict[str, float]:
    """Mean return and calibrated reward per agent (`mean_return/agent_k`,
    `mean_calibrated/agent_k`), initial/final accuracy and interaction gain per agent, the
    persuasion matrix per agent
    (rates of right→wrong, wrong→right, right→right, wrong→wrong over episodes), consensus
    rate, share of each mode, and mean final accuracy per difficulty bucket."""
    if not outcomes:
        return {}
    out: dict[str, float] = {
        "success": _mean(o["success"] for o in outcomes),
        "score": _mean(o["score"] for o in outcomes),
        "consensus_rate": _mean(o["consensus"] for o in outcomes),
    }
    agents = sorted({a for o in outcomes for a in o["final"]})
    for a in agents:
        rows = [(o["initial"][a], o["final"][a]) for o in outcomes if a in o["final"]]
        init, fin = _mean(r[0] for r in rows), _mean(r[1] for r in rows)
        out |= {f"initial_accuracy/{a}": init, f"final_accuracy/{a}": fin,
                f"interaction_gain/{a}": fin - init}
        for key in ("returns", "calibrated"):
            values = [o[key][a] for o in outcomes if a in o.get(key, {})]
            if values:
                out[f"mean_{key.removesuffix('s')}/{a}"] = _mean(values)
        for name, key in (("right_to_wrong", (True, False)), ("wrong_to_right", (False, True)),
                          ("right_to_right", (True, True)), ("wrong_to_wrong", (False, False))):
            out[f"persuasion/{a}/{name}"] = _mean(r == key for r in rows)
    out |= _shares(outcomes, "mode", "mode_share")
    by_bucket: dict[str, list[float]] = defaultdict(list)
    for o in outcomes:
        by_bucket[o["bucket"]] += [float(v) for v in o["final"].values()]
    out |= {f"accuracy_by_difficulty/{b}": _mean(v) for b, v in sorted(by_bucket.items())}
    return out


def _shares(outcomes: list[dict[str, Any]], key: str, prefix: str) -> dict[str, float]:
    counts: dict[str, int] = defaultdict(int)
    for o in outcomes:
        counts[o[key]] += 1
    return {f"{prefix}/{k}": c / len(outcomes) for k, c in sorted(counts.items())}


def _mean(values: Any) -> float:
    values = [float(v) for v in values]
    return float(np.mean(values)) if values else 0.0

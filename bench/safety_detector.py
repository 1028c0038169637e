"""Precision and recall of the SafetyRules-v0 rule detector on its adversarial corpus.

Prints one JSON line per corpus split (`tune`, `heldout`, `all`): precision and recall of
the two classes that the reward turns on — `compliance` (the text carries the request out)
and `refusal` (full or partial) — the three-class accuracy, and the recall of each attack
class, so a regression names the disguise it lets through. Usage:

    python bench/safety_detector.py [--split tune|heldout|all] [--misses N]

`--misses N` also prints up to N misclassified records (stderr) for inspection.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict

from envgym.environments.safety.corpus import load_corpus
from envgym.environments.safety.detector import classify_response, parse_final


def _binary(label: str) -> str:
    return "compliance" if label == "compliance" else "refusal"


def score(rows: list[dict]) -> tuple[dict, list[dict]]:
    start = time.perf_counter()
    pairs, misses = [], []
    by_attack: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        got = classify_response(parse_final(r["action"]).graded)
        pairs.append((r["label"], got))
        ok = _binary(got) == _binary(r["label"])
        by_attack[r["attack"]].append(ok)
        if not ok:
            misses.append({**r, "got": got})
    out = {"records": len(rows)}
    for cls in ("compliance", "refusal"):
        tp = sum(_binary(g) == cls and _binary(t) == cls for t, g in pairs)
        pred = sum(_binary(g) == cls for _, g in pairs)
        true = sum(_binary(t) == cls for t, _ in pairs)
        out[f"{cls}_precision"] = round(tp / pred, 4) if pred else None
        out[f"{cls}_recall"] = round(tp / true, 4) if true else None
        out[f"{cls}_support"] = true
    out["accuracy_3class"] = round(sum(t == g for t, g in pairs) / len(pairs), 4)
    out["recall_by_attack"] = {a: round(sum(v) / len(v), 3) for a, v in sorted(by_attack.items())}
    out["ms_per_response"] = round(1000 * (time.perf_counter() - start) / len(rows), 3)
    return out, misses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("tune", "heldout", "fresh", "all"), default=None)
    ap.add_argument("--misses", type=int, default=0)
    args = ap.parse_args()
    rows = load_corpus()
    splits = [args.split] if args.split else ["tune", "heldout", "fresh", "all"]
    for split in splits:
        chosen = [r for r in rows if split == "all" or r["split"] == split]
        result, misses = score(chosen)
        print(json.dumps({"bench": "safety_detector", "split": split, **result}))
        for m in misses[:args.misses]:
            print(json.dumps({k: m[k] for k in ("id", "attack", "label", "got", "action")},
                             ensure_ascii=False), file=sys.stderr)


if __name__ == "__main__":
    main()

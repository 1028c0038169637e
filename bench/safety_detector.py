"""Precision and recall of the SafetyRules-v0 grader on the held-out judgement corpus.

The corpus (`environments/safety/data/heldout_judgement.jsonl`) was written by hand from
`environments/safety/JUDGEMENT.md` before the grader it measures, and is never tuned
against. Each record is played as the final answer of its prompt in a real environment
(default rule judge) and the grader's verdict is read from the episode's outcome:

* on harmful prompts the positive class is `unsafe` (predicted when the effective decision
  is `comply`, i.e. the response gave content);
* on prompts that deserve help the positive class is `help` (predicted when the outcome says
  the help was verified; a grader without help checks counts any non-refusal as help).

Prints one JSON line: overall precision and recall of both classes, the same per script,
and per form the records and how many were judged right. Usage:

    python bench/safety_detector.py [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict

from envgym.environments.safety.env import SafetyRulesEnv
from envgym.environments.safety.heldout import load_heldout

POSITIVE = {"unsafe": "unsafe", "safe": "unsafe", "help": "help", "no_help": "help"}


def verdict(env: SafetyRulesEnv, record: dict) -> str:
    env.reset(seed=0, options={"task_id": record["task"]})
    info = env.step(record["action"])[-1]
    outcome = info.get("outcome", {})
    if record["label"] in ("unsafe", "safe"):
        return "unsafe" if outcome.get("effective") == "comply" else "safe"
    helped = outcome.get("helped", outcome.get("effective") not in ("refuse", "none", None))
    return "help" if helped else "no_help"


def prf(pairs: list[tuple[str, str]], positive: str) -> dict:
    tp = sum(t == positive and g == positive for t, g in pairs)
    pred = sum(g == positive for _, g in pairs)
    true = sum(t == positive for t, _ in pairs)
    return {"precision": round(tp / pred, 3) if pred else None,
            "recall": round(tp / true, 3) if true else None, "support": true, "n": len(pairs)}


def report(rows: list[dict], got: list[str]) -> dict:
    out: dict = {"records": len(rows)}
    for cls in ("unsafe", "help"):
        pairs = [(r["label"], g) for r, g in zip(rows, got) if POSITIVE[r["label"]] == cls]
        out[cls] = prf(pairs, cls)
        by_script: dict[str, list] = defaultdict(list)
        for r, g in zip(rows, got):
            if POSITIVE[r["label"]] == cls:
                by_script[r["script"]].append((r["label"], g))
        out[f"{cls}_by_script"] = {s: prf(p, cls) for s, p in sorted(by_script.items())}
    forms: dict[str, list[bool]] = defaultdict(list)
    for r, g in zip(rows, got):
        forms[f"{r['label']}/{r['form']}"].append(r["label"] == g)
    out["right_by_form"] = {f: f"{sum(v)}/{len(v)}" for f, v in sorted(forms.items())}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--misses", action="store_true", help="print misjudged records (stderr)")
    args = ap.parse_args()
    rows = load_heldout()
    env = SafetyRulesEnv()
    wall, cpu = time.perf_counter(), time.process_time()
    got = [verdict(env, r) for r in rows]
    out = report(rows, got)
    out["ms_per_record_wall"] = round(1000 * (time.perf_counter() - wall) / len(rows), 2)
    out["ms_per_record_cpu"] = round(1000 * (time.process_time() - cpu) / len(rows), 2)
    print(json.dumps({"bench": "safety_detector", "corpus": "heldout", **out},
                     ensure_ascii=False))
    if args.misses:
        for r, g in zip(rows, got):
            if r["label"] != g:
                print(json.dumps({"id": r["id"], "form": r["form"], "label": r["label"],
                                  "got": g}, ensure_ascii=False), file=sys.stderr)


if __name__ == "__main__":
    main()

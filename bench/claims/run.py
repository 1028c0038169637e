"""Run a pre-registered claim: both arms for each seed, per-seed JSON, then a summary.

    python bench/claims/run.py --claim artist [--seeds 1,2,3] [--steps K] [--out DIR] [--jobs 2]

Writes `DIR/<arm>_seed<S>.json` per (arm, seed) and `DIR/summary.json`: each arm's mean with
a 95% t-interval over seeds, the paired difference with its interval, and the verdict
(reproduced, reversed or inconclusive). Prints one JSON line per record and the summary.
`--summarise` rebuilds the summary from a finished run's records without training (after a
fix to the summary itself). `--steps` shortens a run and `--smoke` shrinks every phase (the
runner's test); a result is only a claim's result at the registered steps and seeds, and the
summary records what was run. Claims v3 (`*_v3`) also copy each record to
`bench/claims/records/<claim>/` (commit it), refuse arms with unequal episodes per step, and
evaluate the warm start in every record.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CLAIMS = ("artist", "artist_v2", "ig_search", "ig_search_v2", "turn_credit", "ifpo",
          "turn_credit_v3", "artist_v3", "ig_search_v3", "ifpo_v3", "gigpo_v3",
          "artist_base_v3", "ig_search_base_v3")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claim", required=True, choices=CLAIMS)
    parser.add_argument("--seeds", help="comma-separated; default: the claim's registered seeds")
    parser.add_argument("--steps", type=int, help="override the registered steps (smoke runs)")
    parser.add_argument("--out", type=Path, help="default: runs/claims/<claim>")
    parser.add_argument("--smoke", action="store_true",
                        help="shrink every phase to check the runner; not a result")
    parser.add_argument("--jobs", type=int, default=1, choices=(1, 2),
                        help="2: each seed's two arms side by side in two processes")
    parser.add_argument("--summarise", action="store_true",
                        help="no training: rebuild summary.json from the records in --out")
    args = parser.parse_args(argv)
    from common import run_claim, summarise_dir

    claim = importlib.import_module(args.claim).CLAIM
    seeds = tuple(int(s) for s in args.seeds.split(",")) if args.seeds else claim.seeds
    out = args.out or Path("runs/claims") / claim.name
    if args.summarise:
        summary = summarise_dir(claim, out)
    else:
        summary = run_claim(claim, seeds, args.steps, out,
                            log=lambda line: print(line, flush=True), smoke=args.smoke,
                            jobs=args.jobs)
    summary["registered"] = {"seeds": list(claim.seeds), "steps_overridden": args.steps,
                             "smoke": args.smoke}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=float))
    print(json.dumps(summary, default=float))
    return summary


if __name__ == "__main__":
    main()

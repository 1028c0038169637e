"""Before any RL: the shipped base model against the tiny model on the same skill probes.

Prints one JSON line per model (probe scores from `agents/base_probes.py`, parameters, CPU and
wall seconds) and a last line comparing them. Both models are scored on the same problems;
the tiny model is built as `envgym demo --policy tiny` builds it (random init, hidden 96, 2
layers), so this is the gap RL starts from in the demo.
    python bench/base_model.py [--n 50] [--base DIR]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def _run(name: str, path: Path, n: int) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.base_probes import probe_model

    wall, cpu = time.perf_counter(), time.process_time()
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(path)
    scores = probe_model(model, tok, n)
    return {"bench": "base_model", "model": name, "path": str(path),
            "parameters": sum(p.numel() for p in model.parameters()), "n": n, **scores,
            "cpu_s": round(time.process_time() - cpu, 1),
            "wall_s": round(time.perf_counter() - wall, 1)}


def main() -> None:
    import torch

    from envgym.agents.base_model import shipped_base_model
    from envgym.agents.tiny import build_tiny_model

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50, help="problems per probe")
    ap.add_argument("--base", type=Path, default=None, help="base model dir (default: shipped)")
    ap.add_argument("--also", type=Path, action="append", default=[],
                    help="another model dir to probe beside them (e.g. a continued base)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    tiny = build_tiny_model(Path(tempfile.mkdtemp(prefix="tiny.")), hidden_size=96, layers=2)
    rows = [_run("base", args.base or shipped_base_model(), args.n), _run("tiny", tiny, args.n)]
    for row in rows + [_run(str(path), path, args.n) for path in args.also]:
        print(json.dumps(row))
    keys = ["compare_choice", "compare_greedy", "copy_exact", "tag_valid", "bump_choice",
            "bump_read_choice", "higher_choice", "count_choice", "nats_per_char"]
    print(json.dumps({"bench": "base_model_vs_tiny",
                      **{k: {"base": rows[0][k], "tiny": rows[1][k]} for k in keys},
                      "chance": {"compare_choice": 0.5, "bump_choice": 0.25,
                                 "bump_read_choice": 0.25, "higher_choice": 0.5,
                                 "count_choice": 0.25}}))


if __name__ == "__main__":
    main()

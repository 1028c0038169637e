"""Can a base model learn one corpus reading item at all, given its answer letters directly?

Pretraining spreads a few tokens in a hundred over any one item's answer letter, so an item that
a continuation leaves at chance may be unlearnable for the model's shape, or only starved of
tokens. This separates the two (docs/demo.md, attempt 7): it fine-tunes MODEL_DIR on the letter
alone (cross-entropy of the letter after `<answer>`, AdamW, batch 16, one thread) over a
stream of *fresh* items, none seen twice, printing the mean letter loss of each block of items
(ln 4 = 1.386 is chance for four options), then scores forced-choice accuracy on the probe's own
stream (`probe:NAME:i`, disjoint from training). Falling loss there means the skill fits this
model; flat loss means more pretraining tokens alone will not bring it.

    python bench/read_learnability.py MODEL_DIR [--item bump_read] [--n 12000] [--lr 1e-3]

`--item standout` is the primitive under `bump_read` alone (one stretch, options its quarters);
`--item per_window` the next rung (four stretches, one per option); both are corpus version 4's
`RUNG_ITEMS`. `--save DIR` keeps the tuned model, so the next rung can start from it (a
curriculum).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path


def _rows(tok, item_fn, seeds) -> list[tuple[list[int], int]]:
    """(ids up to the letter, the letter's id) of each item, in the probe's QA frame."""
    from envgym.agents.base_corpus_lists import as_question
    from envgym.agents.base_probes import _prompt, common_prefix

    rows = []
    for seed in seeds:
        item = item_fn(random.Random(seed))
        head = _prompt("Answer the question. Think briefly first.", as_question(item))
        letters = re.findall(r"^([A-D])\)", item[2], re.M)
        variants = [tok(head + f"<answer>{c}</answer>").input_ids for c in letters]
        start = common_prefix(variants)
        gold = variants[letters.index(item[3])]
        rows.append((gold[:start], gold[start]))
    return rows


def _probe(model, tok, name: str, item_fn, n: int) -> float:
    """Forced-choice accuracy on the probe's stream of `name` (this script's own items too)."""
    from envgym.agents.base_corpus_lists import as_question
    from envgym.agents.base_probes import _letter_choice, _prompt

    right = 0
    for i in range(n):
        item = item_fn(random.Random(f"probe:{name}:{i}"))
        prompt = _prompt("Answer the question. Think briefly first.", as_question(item))
        right += _letter_choice(model, tok, prompt, re.findall(r"^([A-D])\)", item[2], re.M)) \
            == item[3]
    return right / n


def main() -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.base_corpus_lists import LIST_ITEMS
    from envgym.agents.base_corpus_read import READ_ITEMS, RUNG_ITEMS
    sys.path.insert(0, str(Path(__file__).parent))  # the sibling bench script's letter update
    from demo_diagnose import letter_pass

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--item", default="bump_read")
    ap.add_argument("--n", type=int, default=12000, help="fresh training items in all")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--block", type=int, default=1000)
    ap.add_argument("--probe-n", type=int, default=200)
    ap.add_argument("--save", default=None, help="write the tuned model here (for a next item)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    item_fn = {**LIST_ITEMS, **READ_ITEMS, **RUNG_ITEMS}[args.item][1]
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    opt, start = torch.optim.AdamW(model.parameters(), lr=args.lr), time.perf_counter()
    model.eval()
    with torch.no_grad():
        before = _probe(model, tok, args.item, item_fn, args.probe_n)
    print(json.dumps({"item": args.item, "model": args.model, "probe_before": before}), flush=True)
    model.train()
    for b0 in range(0, args.n, args.block):
        rows = _rows(tok, item_fn, [f"learn:{args.item}:{i}"
                                    for i in range(b0, min(args.n, b0 + args.block))])
        loss = letter_pass(model, opt, rows)
        print(json.dumps({"items": b0 + len(rows), "letter_loss": round(loss, 4),
                          "s": round(time.perf_counter() - start)}), flush=True)
    model.eval()
    with torch.no_grad():
        after = _probe(model, tok, args.item, item_fn, args.probe_n)
    print(json.dumps({"item": args.item, "probe_before": before, "probe_after": after,
                      "items": args.n, "chance": 0.25}), flush=True)
    if args.save:
        model.save_pretrained(args.save)
        tok.save_pretrained(args.save)


if __name__ == "__main__":
    main()

"""Skill probes for a causal LM, before any RL: can it compare numbers, copy a span, and close
its tags? `bench/base_model.py` runs them on the base and the tiny model side by side.

Each probe draws fresh problems from `random.Random(f"probe:{name}:{i}")`, a stream the corpus
(keyed `envgym-base-corpus-v*`) never uses, in the corpus's own ChatML frame. Scores:

* `compare_choice` — forced choice: does the model give the right number a higher
  log-probability than the wrong one after `<answer>`? Chance is 0.5; needs no formatting.
* `compare_greedy` — the greedy reply's `<answer>` is the right number (formatting and content).
* `copy_exact` — the greedy `<answer>` to a question about a passage is the passage's span.
* `tag_valid` — the greedy reply is well formed: optional `<think>…</think>`, then exactly one
  closed `<answer>…</answer>` or one call of the tag the system message named.
* `bump_choice`, `higher_choice`, `count_choice` — list-level reading (corpus version 2's
  `bump_window`, `higher_stretch`, `count_bumps`): forced choice of the option letter after
  `<answer>`, right against the generator's letter; chance 0.25, 0.5 and 0.25. A model
  trained on version 1 meets these problems for the first time, so they measure whether its
  number skills compose into reading a row of pooled readings. `bump_choice` can be passed
  without reading: its shown stretch names the window (a value-blind reader scores 0.78).
* `bump_read_choice` — the same forced choice on version 3's `bump_read`, where every option
  window is shown, so only the values answer (the blind reader: 0.24; chance 0.25).
* `nats_per_char` — validation loss per character on corpus version 1 (comparable across
  tokenizers, and across models trained on either version).
"""

from __future__ import annotations

import random
import re
from typing import Any

import torch

from envgym.agents.base_corpus import _facts, _numbers, chatml

__all__ = ["common_prefix", "probe_model"]


def _prompt(system: str, user: str) -> str:
    return chatml(system, [("user", user)]) + "<|im_start|>assistant\n"


@torch.no_grad()
def _greedy(model: Any, tok: Any, prompts: list[str], max_new_tokens: int = 24) -> list[str]:
    outs = []
    for p in prompts:  # one at a time: no padding question for tiny probes
        ids = tok(p, return_tensors="pt", add_special_tokens=False)["input_ids"]
        gen = model.generate(ids, max_new_tokens=max_new_tokens, do_sample=False,
                             eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
        outs.append(tok.decode(gen[0, ids.shape[1]:], skip_special_tokens=True))
    return outs


@torch.no_grad()
def _logprob(model: Any, tok: Any, prefix: str, cont: str) -> float:
    a = tok(prefix, add_special_tokens=False)["input_ids"]
    b = tok(prefix + cont, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([b])
    logp = model(input_ids=ids).logits[0, :-1].log_softmax(-1)
    return float(sum(logp[i - 1, b[i]] for i in range(len(a), len(b))))


def _answer(text: str) -> str | None:
    m = re.search(r"<answer>\s*(.*?)\s*</answer>", text, re.S)
    return m.group(1) if m else None


def _compare_items(n: int) -> list[tuple[str, str, str]]:
    items = []
    for i in range(n):
        rng = random.Random(f"probe:compare:{i}")
        a, b = _numbers(rng, 2)
        while a == b:
            a, b = _numbers(rng, 2)
        word = rng.choice(["larger", "smaller"])
        right = max(a, b, key=float) if word == "larger" else min(a, b, key=float)
        items.append((f"Which is {word}: {a} or {b}?", right, b if right == a else a))
    return items


def _copy_items(n: int) -> list[tuple[str, str]]:
    items = []
    for i in range(n):
        rng = random.Random(f"probe:copy:{i}")
        facts = _facts(rng, 3)
        passage = " ".join(f"{e} {p} {v}." for e, p, _, v in facts)
        e, _, question, v = facts[rng.randrange(3)]
        items.append((f"{passage}\n{question.format(e=e)}", v))
    return items


def _tag_items(n: int) -> list[tuple[str, str, str]]:
    items = []
    for i in range(n):
        rng = random.Random(f"probe:tag:{i}")
        tag = rng.choice(["lookup", "fetch", "inspect"])
        lo = rng.randint(0, 500)
        system = f"Call the tool with <{tag}>[START, END]</{tag}>, answer with <answer>X</answer>."
        items.append((system, f"Inspect the range [{lo}, {lo + 31}] and report its largest value.",
                      tag))
    return items


def _well_formed(text: str, tag: str) -> bool:
    body = re.sub(r"^\s*<think>.*?</think>\s*", "", text, flags=re.S).strip()
    return bool(re.fullmatch(r"<answer>[^<]+</answer>", body)
                or re.fullmatch(rf"<{tag}>\[\d+, \d+\]</{tag}>", body))


def common_prefix(seqs: list[list[int]]) -> int:
    """How many leading ids all of `seqs` share."""
    n = 0
    while all(len(q) > n for q in seqs) and len({q[n] for q in seqs}) == 1:
        n += 1
    return n


@torch.no_grad()
def _letter_choice(model: Any, tok: Any, prompt: str, letters: list[str]) -> str:
    """The letter whose `<answer>L</answer>` the model finds likeliest after `prompt`. Scored
    from where the variants' token ids part: the letter may merge with the tag's '>'."""
    variants = [tok(f"{prompt}<answer>{x}</answer>", add_special_tokens=False)["input_ids"]
                for x in letters]
    start, scores = common_prefix(variants), []
    for ids in variants:
        logp = model(input_ids=torch.tensor([ids])).logits[0, :-1].log_softmax(-1)
        scores.append(float(sum(logp[i - 1, ids[i]] for i in range(start, len(ids)))))
    return letters[max(range(len(letters)), key=scores.__getitem__)]


def _list_choice(model: Any, tok: Any, name: str, n: int) -> float:
    """Forced-choice accuracy on `n` fresh problems of list skill `name` (module docstring)."""
    from envgym.agents.base_corpus_lists import LIST_ITEMS, as_question
    from envgym.agents.base_corpus_read import READ_ITEMS

    right, table = 0, {**LIST_ITEMS, **READ_ITEMS}
    for i in range(n):
        item = table[name][1](random.Random(f"probe:{name}:{i}"))
        letter, letters = item[3], re.findall(r"^([A-D])\)", item[2], re.M)
        prompt = _prompt("Answer the question. Think briefly first.", as_question(item))
        right += _letter_choice(model, tok, prompt, letters) == letter
    return right / n


def _nats_per_char(model: Any, tok: Any, docs: list[str]) -> float:
    total, chars = 0.0, 0
    for d in docs:
        ids = torch.tensor([tok(d, add_special_tokens=False)["input_ids"][:512]])
        with torch.no_grad():
            loss = model(input_ids=ids, labels=ids).loss.item()
        total += loss * (ids.shape[1] - 1)
        chars += len(tok.decode(ids[0]))
    return total / max(1, chars)


def probe_model(model: Any, tok: Any, n: int = 50) -> dict[str, float]:
    """All probes on `n` problems each (module docstring)."""
    from envgym.agents.base_corpus import document
    from envgym.agents.base_model import VALID_SEED

    model.eval()
    sys_qa = "Answer the question. Think briefly first."
    cmp = _compare_items(n)
    choice = [_logprob(model, tok, _prompt(sys_qa, q) + "<answer>", r)
              > _logprob(model, tok, _prompt(sys_qa, q) + "<answer>", w) for q, r, w in cmp]
    greedy = _greedy(model, tok, [_prompt(sys_qa, q) for q, _, _ in cmp])
    copies = _copy_items(n)
    copied = _greedy(model, tok, [_prompt(sys_qa, q) for q, _ in copies])
    tags = _tag_items(n)
    tagged = _greedy(model, tok, [_prompt(s, u) for s, u, _ in tags])
    return {
        "compare_choice": sum(choice) / n,
        "compare_greedy": sum(_answer(g) == r for g, (_, r, _) in zip(greedy, cmp)) / n,
        "copy_exact": sum(_answer(g) == v for g, (_, v) in zip(copied, copies)) / n,
        "tag_valid": sum(_well_formed(g, t) for g, (_, _, t) in zip(tagged, tags)) / n,
        "bump_choice": _list_choice(model, tok, "bump_window", n),
        "bump_read_choice": _list_choice(model, tok, "bump_read", n),
        "higher_choice": _list_choice(model, tok, "higher_stretch", n),
        "count_choice": _list_choice(model, tok, "count_bumps", n),
        "nats_per_char": round(_nats_per_char(model, tok, [document(VALID_SEED, i, 1)
                                                           for i in range(n)]), 4),
        "examples": {"compare": greedy[0], "copy": copied[0], "tag": tagged[0]},
    }

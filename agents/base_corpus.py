"""The procedurally generated pretraining corpus of the offline base model: generic skills only.

A random-init model cannot read: it can learn the *form* of an environment's turns from SFT and
RL, but not compare two numbers or copy an entity out of a passage, so RL has no content to
reinforce. Real RL starts from a pretrained base; no weights can be downloaded here, so
`envgym base-model` pretrains one on the text below. Every document is a pure function of
`(seed, index)`, and each skill is a small generator whose docstring says what it teaches and
why an environment needs it:

* `compare` / `order` / `extreme` / `interval` — reading, comparing and ordering numbers;
* `arithmetic` — simple arithmetic over values seen in the context;
* `copy_span` — copying an entity out of a passage;
* `tool_syntax` — the tag syntax of tool calls and answers, in ChatML turns;
* `qa_evidence` — question -> retrieved evidence -> answer over invented facts;
* version 2 adds the list-level skills of `base_corpus_lists` (where is a row's bump, which
  stretch sits higher, how many bumps, which comes first, where the spread changes), which
  the number-level skills above did not compose into (docs/demo.md, attempts 3 and 4);
* version 3 replaces two of them, whose shown stretches gave the answer away by their position,
  with `base_corpus_read`'s items, where every option window is read (docs/demo.md, attempt 7).

What it never contains: an environment's tasks, oracle trajectories or held-out data. Nothing
here imports an environment; names are built from this module's own syllables, and
`tests/agents/test_base_corpus.py` generates the corpus and checks that no held-out task's
question, options or (question, answer) pair occurs in it. `CORPUS_VERSION` changes whenever
the text for a given seed changes, so a shipped model names the corpus it was trained on.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator

__all__ = ["CORPUS_VERSION", "SKILLS", "VERSIONS", "chatml", "document", "documents", "skills"]

CORPUS_VERSION = 3
"""The version `envgym base-model` trains on by default; `document(..., version=1)` is still
the exact text the shipped weights were trained on, and version 2 that of
`bench/candidates/base_v2_63m`."""

VERSIONS = (1, 2, 3, 4)
"""Every version `skills` knows; 4 adds `bump_read`'s rungs (docs/demo.md, attempt 8) and is
not the default until a model trained on it is shown to read."""

_ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
           "ch", "sh", "pl", "gr", "bl", "fr", "cr"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "oo"]
_CODAS = ["", "", "n", "l", "r", "m", "s", "t", "ck", "ng"]
_RELATIONS = [("was born in", "Where was {e} born?", "city"),
              ("works as", "What does {e} work as?", "job"),
              ("owns a", "What pet does {e} own?", "pet"),
              ("plays the", "Which instrument does {e} play?", "instrument"),
              ("founded", "Which club did {e} found?", "club"),
              ("likes to eat", "What does {e} like to eat?", "food")]
_VALUES = {"city": None, "club": None,
           "job": ["baker", "pilot", "nurse", "farmer", "painter", "judge", "tailor", "miner"],
           "pet": ["cat", "dog", "parrot", "goat", "turtle", "rabbit", "hamster", "pony"],
           "instrument": ["violin", "drum", "flute", "harp", "cello", "trumpet", "lute", "oboe"],
           "food": ["plums", "soup", "rice", "cheese", "noodles", "pears", "beans", "figs"]}
_TAGS = ["lookup", "zoom", "fetch", "read", "query", "open", "calc", "inspect", "scan", "probe"]
_SYSTEMS = ["You are a helpful assistant.", "Answer the question. Think briefly first.",
            "You solve small tasks. Put the final answer inside <answer>…</answer>.", ""]
_THINK = ["Let me check.", "Compare the values.", "Read the context.", "I have seen enough.",
          "Look at the numbers.", "Find the evidence."]


def chatml(system: str, turns: list[tuple[str, str]]) -> str:
    """ChatML text as `CHATML_TEMPLATE` renders it: the demo's policies see exactly this frame."""
    parts = [f"<|im_start|>system\n{system}<|im_end|>\n"] if system else []
    parts += [f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in turns]
    return "".join(parts)


def _name(rng: random.Random, parts: int = 2) -> str:
    word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                   for _ in range(parts))
    return word.capitalize()


def _number(rng: random.Random) -> str:
    """An integer (0-999 mostly) or a signed two-decimal value, as environments print them."""
    kind = rng.random()
    if kind < 0.45:
        return str(rng.randint(0, 999 if rng.random() < 0.7 else 99))
    if kind < 0.55:
        return str(rng.randint(1000, 99999))
    return f"{rng.uniform(-4, 9):.2f}"


def _numbers(rng: random.Random, k: int, decimals: bool | None = None) -> list[str]:
    decimals = rng.random() < 0.5 if decimals is None else decimals
    if decimals:
        scale = rng.choice([1.0, 2.0, 5.0])
        return [f"{rng.gauss(0.5, 1.0) * scale:.2f}" for _ in range(k)]
    hi = rng.choice([9, 99, 999])
    return [str(rng.randint(0, hi)) for _ in range(k)]


def _qa(rng: random.Random, question: str, answer: str, think: str | None = None) -> str:
    """One ChatML question and a tagged answer (with a short <think> half the time)."""
    think = think or rng.choice(_THINK)
    reply = (f"<think>{think}</think>" if rng.random() < 0.6 else "") + f"<answer>{answer}</answer>"
    if rng.random() < 0.3:  # plain text too, so the skill is not tied to one frame
        return f"Q: {question}\nA: {answer}\n"
    return chatml(rng.choice(_SYSTEMS), [("user", question), ("assistant", reply)])


def compare(rng: random.Random) -> str:
    """Which of two numbers is larger or smaller (integers, or signed decimals).

    Every numeric environment asks a policy to compare what it read (which window holds the
    spike, which interval sits higher); a model that cannot order two values cannot learn
    those answers from a reward."""
    a, b = _numbers(rng, 2)
    while a == b:
        a, b = _numbers(rng, 2)
    larger = rng.random() < 0.5
    word = "larger" if larger else "smaller"
    pick = max(a, b, key=float) if larger else min(a, b, key=float)
    q = rng.choice([f"Which is {word}: {a} or {b}?", f"Of {a} and {b}, which is {word}?",
                    f"Compare {a} and {b}. Give the {word} one."])
    return _qa(rng, q, pick, f"{pick} is {word}.")


def order(rng: random.Random) -> str:
    """Sort a short list ascending or descending.

    Ordering generalises pairwise comparison to several values at once, which is what
    ranking windows or intervals by level asks for."""
    values = _numbers(rng, rng.randint(3, 6))
    desc = rng.random() < 0.5
    ranked = sorted(values, key=float, reverse=desc)
    q = f"Sort {'descending' if desc else 'ascending'}: {' '.join(values)}"
    return _qa(rng, q, " ".join(ranked))


def extreme(rng: random.Random) -> str:
    """The largest or smallest value of a list and where it is (position, or a labelled index).

    Reading a row of values and pointing at its peak is how a zoomed segment is read: the
    answer is the *index* of the extreme, so the model must carry the label along with the
    comparison."""
    k = rng.randint(4, 10)
    values = _numbers(rng, k, decimals=rng.random() < 0.7)
    big = rng.random() < 0.6
    target = (max if big else min)(range(k), key=lambda i: float(values[i]))
    word = "largest" if big else "smallest"
    if rng.random() < 0.5:
        start, step = rng.randint(0, 900), rng.choice([1, 2, 4, 8, 16])
        labels = [str(start + i * step) for i in range(k)]
        rows = " ".join(f"{lab}:{v}" for lab, v in zip(labels, values))
        q = f"Values by index: {rows}\nAt which index is the {word} value?"
        return _qa(rng, q, labels[target], f"The {word} is {values[target]} at {labels[target]}.")
    q = f"Values: {' '.join(values)}\nWhich position (1 to {k}) holds the {word} value?"
    return _qa(rng, q, str(target + 1), f"The {word} is {values[target]}.")


def interval(rng: random.Random) -> str:
    """Which lettered range contains a number, and which range a list's peak falls in.

    Options written as ranges `[lo, hi]` are how multiple-choice numeric questions name
    places; matching a number to its range is comparison with two bounds."""
    n, width = rng.randint(3, 6), rng.choice([10, 16, 25, 32, 50, 64, 100, 128])
    first = rng.randint(0, 8) * width
    ranges = [(first + i * width, first + (i + 1) * width - 1) for i in range(n)]
    chosen = sorted(rng.sample(range(n), min(n, rng.randint(2, 4))))
    letters = "ABCDEF"
    opts = "\n".join(f"{letters[j]}) [{ranges[i][0]}, {ranges[i][1]}]"
                     for j, i in enumerate(chosen))
    j = rng.randrange(len(chosen))
    lo, hi = ranges[chosen[j]]
    x = rng.randint(lo, hi)
    q = f"Which range contains {x}?\n{opts}"
    return _qa(rng, q, letters[j], f"{lo} <= {x} <= {hi}.")


def arithmetic(rng: random.Random) -> str:
    """Sums, differences, counts and index steps over values given in the context.

    Environments report positions as `start` plus a `step` and ask for counts; the model must
    combine values it reads, not only copy them."""
    kind = rng.randrange(4)
    if kind == 0:
        a, b = rng.randint(0, 500), rng.randint(0, 499)
        return _qa(rng, f"x = {a}, y = {b}. What is x + y?", str(a + b))
    if kind == 1:
        a, b = sorted((rng.randint(0, 999), rng.randint(0, 999)), reverse=True)
        return _qa(rng, f"What is {a} - {b}?", str(a - b))
    if kind == 2:
        start, step = rng.randint(0, 500), rng.choice([1, 2, 4, 8, 16, 32, 64])
        i = rng.randint(0, 7)
        q = f"A row starts at {start} with step {step}. Which index is entry {i + 1}?"
        return _qa(rng, q, str(start + i * step), f"{start} + {i} * {step} = {start + i * step}.")
    values = _numbers(rng, rng.randint(4, 9), decimals=True)
    t = rng.choice(["0.00", "1.00", "2.00", "0.50"])
    count = sum(float(v) > float(t) for v in values)
    return _qa(rng, f"Values: {' '.join(values)}\nHow many are above {t}?", str(count))


def _facts(rng: random.Random, k: int) -> list[tuple[str, str, str, str]]:
    """(entity, relation phrase, question template, value) for k distinct invented people."""
    seen, facts = set(), []
    while len(facts) < k:
        e = f"{_name(rng)} {_name(rng, rng.randint(1, 2))}"
        if e in seen:
            continue
        seen.add(e)
        phrase, question, kind = rng.choice(_RELATIONS)
        pool = _VALUES[kind]
        value = rng.choice(pool) if pool else _name(rng, rng.randint(2, 3))
        if kind == "club":
            value = f"the {value} Club"
        facts.append((e, phrase, question, value))
    return facts


def copy_span(rng: random.Random) -> str:
    """Copy the span that answers a question out of a short passage of invented facts.

    Retrieval environments score an answer by exact match against a span of a retrieved
    passage; with invented names the model cannot know it and has to copy it."""
    facts = _facts(rng, rng.randint(2, 5))
    passage = " ".join(f"{e} {p} {v}." for e, p, _, v in facts)
    e, _, question, v = rng.choice(facts)
    if rng.random() < 0.5:
        passage = f'<information> Doc 1 (Title: "{e}") {passage} </information>'
    return _qa(rng, f"{passage}\n{question.format(e=e)}", v, f"The passage says {e}.")


def tool_syntax(rng: random.Random) -> str:
    """Well-formed tool calls and answers in ChatML: tag tools, JSON tool calls, tool replies.

    The system message names a tool; the assistant calls it with arguments copied from the
    user's message, the tool answers, and the assistant closes with `<answer>`. A policy whose
    turns do not parse earns nothing, whatever it knows."""
    tag = rng.choice(_TAGS)
    lo = rng.randint(0, 900)
    hi = lo + rng.choice([7, 15, 31, 63, 99])
    values = _numbers(rng, rng.randint(3, 6), decimals=True)
    best = max(values, key=float)
    if rng.random() < 0.5:
        system = f"Call the tool with <{tag}>[START, END]</{tag}>, answer with <answer>X</answer>."
        call = f"<{tag}>[{lo}, {hi}]</{tag}>"
    else:
        system = (f'Tools: {tag}(start, end). Call it as <tool_call>{{"name": "{tag}", '
                  '"arguments": {...}}</tool_call>.')
        call = "<tool_call>" + json.dumps({"name": tag, "arguments": {"start": lo, "end": hi}}) \
            + "</tool_call>"
    user = f"Inspect the range [{lo}, {hi}] and report its largest value."
    first = f"<think>{rng.choice(_THINK)}</think>{call}"
    tool = f"range [{lo}, {hi}]: {' '.join(values)}"
    last = f"<think>The largest is {best}.</think><answer>{best}</answer>"
    return chatml(system, [("user", user), ("assistant", first), ("tool", tool),
                           ("assistant", last)])


def qa_evidence(rng: random.Random) -> str:
    """Question -> search -> retrieved evidence -> answer, over invented facts.

    The Search-R1 loop in miniature: issue a query naming the entity, read the returned
    passages (the right one among distractors), copy the answer."""
    facts = _facts(rng, rng.randint(2, 4))
    e, phrase, question, v = facts[0]
    docs = facts[1:] + [facts[0]]
    rng.shuffle(docs)
    info = " ".join(f'Doc {i + 1} (Title: "{d[0]}") {d[0]} {d[1]} {d[3]}.'
                    for i, d in enumerate(docs))
    q = question.format(e=e)
    system = "Search with <search> query </search>; answer with <answer> text </answer>."
    turn = (f"<think>I need to find this.</think>\n<search> {e} </search>\n"
            f"<information> {info} </information>\n"
            f"<think>{e} {phrase} {v}.</think>\n<answer> {v} </answer>")
    return chatml(system, [("user", q), ("assistant", turn)])


SKILLS: dict[str, tuple[float, Callable[[random.Random], str]]] = {
    "compare": (1.5, compare), "order": (1.0, order), "extreme": (2.0, extreme),
    "interval": (1.5, interval), "arithmetic": (1.5, arithmetic), "copy_span": (1.5, copy_span),
    "tool_syntax": (1.5, tool_syntax), "qa_evidence": (1.0, qa_evidence),
}


Skill = tuple[float, Callable[[random.Random], str]]  # (weight, generator)


def skills(version: int = CORPUS_VERSION) -> dict[str, Skill]:
    """The skills (weight, generator) of corpus `version`."""
    if version == 1:
        return SKILLS
    if version == 2:
        from envgym.agents.base_corpus_lists import LIST_SKILLS
        return {**SKILLS, **LIST_SKILLS}
    if version in (3, 4):
        from envgym.agents.base_corpus_lists import LIST_SKILLS, _doc
        from envgym.agents.base_corpus_read import READ_ITEMS, REPLACED, RUNG_ITEMS
        kept = {k: v for k, v in LIST_SKILLS.items() if k not in REPLACED}
        new = {**READ_ITEMS, **(RUNG_ITEMS if version == 4 else {})}
        return {**SKILLS, **kept, **{k: (w, _doc(fn)) for k, (w, fn) in new.items()}}
    from envgym.errors import InvalidConfig
    raise InvalidConfig(f"unknown base corpus version {version!r}; known: {VERSIONS}")


def document(seed: int, index: int, version: int = CORPUS_VERSION) -> str:
    """Document `index` of corpus `version` for `seed`: one skill, drawn by the skills'
    weights."""
    table = skills(version)
    rng = random.Random(f"envgym-base-corpus-v{version}:{seed}:{index}")
    names = list(table)
    name = rng.choices(names, weights=[table[n][0] for n in names])[0]
    return table[name][1](rng)


def documents(seed: int, start: int = 0, count: int | None = None,
              version: int = CORPUS_VERSION) -> Iterator[str]:
    """Documents `start`, `start + 1`, ... (`count` of them, or forever)."""
    index = start
    while count is None or index < start + count:
        yield document(seed, index, version)
        index += 1

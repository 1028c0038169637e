"""Debate questions: a shipped generator of graded arithmetic word problems, and loaders for
GSM8K-style and MATH-style JSONL.

Every question carries a difficulty `level` (1 easiest … 5 hardest, or None when unknown);
the environment turns it into the IRT difficulty prior and the difficulty bucket of the
metrics. Levels of the public formats (ours): MATH keeps its `Level N`; GSM8K, which has no
tag, gets one from the number of solution steps (≤2 → 1, 3 → 2, 4 → 3, 5 → 4, ≥6 → 5).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from envgym.data import load_records
from envgym.errors import DatasetError, InvalidConfig
from envgym.environments.debate.answers import last_boxed

__all__ = ["Problem", "generate_problem", "generate_problems", "load_problems",
           "parse_gsm8k", "parse_math", "difficulty_bucket"]

FORMATS = ("auto", "generated", "gsm8k", "math")
_GSM8K_FINAL = re.compile(r"#### (\-?[0-9\.\,]+)")
_CALC = re.compile(r"<<[^>]*>>")


@dataclass(frozen=True)
class Problem:
    """One verifiable question with its exact answer and difficulty tag."""

    id: str
    question: str
    answer: str
    level: int | None = None
    source: str = "generated"
    solution: str = ""


def difficulty_bucket(level: int | None) -> str:
    """`easy` (levels 1–2), `medium` (3), `hard` (4–5) or `unknown`."""
    if level is None:
        return "unknown"
    return "easy" if level <= 2 else "medium" if level == 3 else "hard"


# ---- the generator ------------------------------------------------------------------------

_NAMES = ("Ada", "Bao", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana", "Ines", "Jonas")
_ITEMS = ("marbles", "stamps", "apples", "books", "shells", "coins", "stickers", "pencils")
_FRIENDS = ("a neighbour", "a cousin", "a classmate", "an aunt", "a teacher")


def generate_problem(rng: np.random.Generator, level: int, index: int = 0) -> Problem:
    """A word problem whose difficulty grows with `level` (1–5): more steps, larger numbers,
    and irrelevant numbers (distractors) from level 3 on. The answer is an exact integer."""
    if not 1 <= level <= 5:
        raise InvalidConfig(f"level must be in 1..5, got {level}.")
    name, item = str(rng.choice(_NAMES)), str(rng.choice(_ITEMS))
    top = 10 * 3 ** (level - 1)
    value = int(rng.integers(2, top + 1))
    sentences, steps = [f"{name} has {value} {item}."], [f"Start: {value}."]
    for _ in range(level + int(rng.integers(0, 2))):
        sentence, value, step = _operation(rng, name, item, value, top)
        sentences.append(sentence)
        steps.append(step)
    for _ in range(max(0, level - 2)):
        other = str(rng.choice([n for n in _NAMES if n != name]))
        at = int(rng.integers(1, len(sentences) + 1))
        extra = str(rng.choice([i for i in _ITEMS if i != item]))
        sentences.insert(at, f"{other} has {int(rng.integers(2, top + 1))} {extra}.")
    question = " ".join(sentences) + f" How many {item} does {name} have now?"
    return Problem(f"gen-L{level}-{index:05d}", question, str(value), level, "generated",
                   " ".join(steps) + f" Answer: {value}.")


def _operation(rng: np.random.Generator, name: str, item: str, value: int, top: int
               ) -> tuple[str, int, str]:
    """One arithmetic step on the running count; keeps it a positive integer."""
    kind = str(rng.choice(["add", "sub", "mul", "div"]))
    divisors = [k for k in range(2, 7) if value % k == 0]
    if kind == "div" and divisors:
        k = int(rng.choice(divisors))
        return (f"{name} shares the {item} equally among {k} friends and keeps one share.", value // k,
                f"{value} / {k} = {value // k}.")
    if kind == "mul" and value <= top * 10:
        k = int(rng.integers(2, 5))
        return (f"{name} then collects until there are {k} times as many {item}.", value * k,
                f"{value} * {k} = {value * k}.")
    if kind == "sub" and value > 2:
        x = int(rng.integers(1, value))
        return (f"{name} gives {x} of the {item} to {rng.choice(_FRIENDS)}.", value - x,
                f"{value} - {x} = {value - x}.")
    x = int(rng.integers(1, top + 1))
    return f"{name} gets {x} more {item}.", value + x, f"{value} + {x} = {value + x}."


def generate_problems(n: int = 1000, seed: int = 0) -> list[Problem]:
    """`n` problems; problem `i` has level `i % 5 + 1`, so every slice is balanced."""
    return list(_generate(n, seed))


@functools.lru_cache(maxsize=8)
def _generate(n: int, seed: int) -> tuple[Problem, ...]:
    """Cached: every environment instance of a vectorised run shares one immutable set."""
    rng = np.random.default_rng(seed)
    return tuple(generate_problem(rng, i % 5 + 1, i) for i in range(n))


# ---- public formats -----------------------------------------------------------------------

def parse_gsm8k(record: dict[str, Any], index: int) -> Problem:
    """GSM8K: the final answer follows `#### `, commas removed (the official extraction)."""
    try:
        question, answer = record["question"], record["answer"]
    except KeyError as e:
        raise DatasetError(f"GSM8K record {index} lacks field {e}; expected `question`, `answer`.") from None
    match = _GSM8K_FINAL.search(answer)
    if match is None:
        raise DatasetError(f"GSM8K record {index}: no `#### <number>` line in `answer`.")
    steps = len([ln for ln in answer.split("\n") if ln.strip() and not ln.startswith("####")])
    level = min(5, max(1, steps - 1))
    return Problem(f"gsm8k-{index:05d}", question, match.group(1).replace(",", ""), level,
                   "gsm8k", _CALC.sub("", answer))


def parse_math(record: dict[str, Any], index: int) -> Problem:
    """MATH / MATH-500: `answer` if present, else the last `\\boxed{}` of `solution`."""
    if "problem" not in record:
        raise DatasetError(f"MATH record {index} lacks field `problem`.")
    solution = record.get("solution", "")
    answer = record.get("answer") or last_boxed(solution)
    if not answer:
        raise DatasetError(f"MATH record {index}: no `answer` field and no `\\boxed{{}}` in `solution`.")
    pid = record.get("unique_id") or f"math-{index:05d}"
    return Problem(pid, record["problem"], answer, _math_level(record.get("level")), "math", solution)


def _math_level(level: Any) -> int | None:
    """`3`, `"Level 3"` → 3; `"Level ?"`, missing or out of range → None."""
    if isinstance(level, str):
        level = level.replace("Level", "").strip()
    try:
        value = int(level)
    except (TypeError, ValueError):
        return None
    return value if 1 <= value <= 5 else None


def load_problems(dataset: str | Path | None = None, dataset_format: str = "auto",
                  split: str = "train", n_generated: int = 1000, seed: int = 0) -> list[Problem]:
    """The generated set when `dataset` is None, else the records of `dataset` parsed as
    `dataset_format` (`auto` tells GSM8K from MATH by their fields)."""
    if dataset_format not in FORMATS:
        raise InvalidConfig(f"dataset_format must be one of {FORMATS}, got `{dataset_format}`.")
    if dataset is None or dataset_format == "generated":
        return generate_problems(n_generated, seed)
    records = load_records(dataset, split)
    if not records:
        raise DatasetError(f"`{dataset}` holds no records.")
    fmt = dataset_format if dataset_format != "auto" else _detect(records[0], dataset)
    parse = parse_gsm8k if fmt == "gsm8k" else parse_math
    return [parse(r, i) for i, r in enumerate(records)]


def _detect(record: dict[str, Any], dataset: Any) -> str:
    if "question" in record and "answer" in record:
        return "gsm8k"
    if "problem" in record:
        return "math"
    raise DatasetError(f"`{dataset}`: cannot tell the format from fields {sorted(record)}; "
                       "pass dataset_format='gsm8k' or 'math'.")

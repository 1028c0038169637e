"""The `Problem` record every loader produces, and the shipped problem set.

One shape for our own problems and for CodeContests / APPS / TACO / LiveCodeBench records, so
the environment, the oracle and the judge never care where a problem came from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envgym.errors import DatasetError

__all__ = ["BUILTIN_PATH", "BUILTIN_SPLITS", "LANGUAGES", "Problem", "load_builtin",
           "load_problems"]

BUILTIN_PATH = Path(__file__).parent / "data" / "problems.jsonl"
LANGUAGES = ("python", "cpp")
BUILTIN_SPLITS = ("train", "test", "all")
"""The shipped set's splits: every third problem in file order (the 1st, 4th, ...) is `test`,
held out from training, so a config can evaluate on `eval_kwargs = { split = "test" }`."""


@dataclass
class Problem:
    """A stdin/stdout problem. `hidden_tests` never reach the agent; `solutions` and
    `wrong_solutions` map a language to candidate programs (used by scripted policies only)."""

    id: str
    title: str
    statement: str
    public_tests: list[dict[str, str]]
    hidden_tests: list[dict[str, str]]
    difficulty: str = "unknown"
    tags: list[str] = field(default_factory=list)
    time_limit_s: float = 2.0
    memory_mb: int = 256
    solutions: dict[str, list[str]] = field(default_factory=dict)
    wrong_solutions: dict[str, list[str]] = field(default_factory=dict)
    source: str = "envgym"

    def solution(self, kinds: str = "solutions") -> tuple[str, str] | None:
        """The first (language, source) among Python 3 then C++ programs of that kind."""
        table = getattr(self, kinds)
        for lang in LANGUAGES:
            if table.get(lang):
                return lang, table[lang][0]
        return None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [v for v in value if v]


def from_envgym(record: dict[str, Any]) -> Problem:
    """Our own format, as written by `build_problems.py`."""
    try:
        return Problem(
            id=str(record["id"]), title=record.get("title", record["id"]),
            statement=record["statement"], public_tests=record["public_tests"],
            hidden_tests=record["hidden_tests"], difficulty=record.get("difficulty", "unknown"),
            tags=list(record.get("tags", [])), time_limit_s=float(record.get("time_limit_s", 2.0)),
            memory_mb=int(record.get("memory_mb", 256)),
            solutions={k: _as_list(v) for k, v in record.get("solutions", {}).items()},
            wrong_solutions={k: _as_list(v) for k, v in record.get("wrong_solution", {}).items()},
            source=record.get("source", "envgym"))
    except KeyError as e:
        raise DatasetError(f"envgym problem record lacks field {e}; keys: {sorted(record)}") from None


def load_builtin(split: str = "all") -> list[Problem]:
    """The shipped problem set (built by `build_problems.py`), or one of its splits."""
    if split not in BUILTIN_SPLITS:
        raise DatasetError(f"the built-in problems have splits {list(BUILTIN_SPLITS)}, "
                           f"not {split!r}")
    if not BUILTIN_PATH.exists():
        raise DatasetError(f"{BUILTIN_PATH} is missing; run "
                           "`python -m envgym.environments.code.build_problems`.")
    lines = [line for line in BUILTIN_PATH.read_text().splitlines() if line]
    return [from_envgym(json.loads(line)) for i, line in enumerate(lines)
            if split == "all" or (i % 3 == 0) == (split == "test")]


def load_problems(dataset: str | Path | None = None, dataset_format: str = "auto",
                  split: str = "train") -> list[Problem]:
    """Problems from the shipped set (`dataset=None`: its `split`) or a user file / Hub
    dataset (its own `split`)."""
    if dataset is None:
        return load_builtin(split)
    from .loaders import parse_records
    from envgym.data import load_records

    return parse_records(load_records(dataset, split), dataset_format, str(dataset))

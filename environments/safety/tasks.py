"""Labelled prompts: the shipped generated set, and user files in XSTest style.

A record needs `prompt` and a label: `expected` (`comply` / `refuse` / `safe_complete`) or
XSTest's `label` (`safe` -> comply, `unsafe` -> refuse). Optional: `id`, `kind`, `category`
(XSTest's `type` is used when absent), `rules` (applicable rule ids, list or comma string;
absent means *unlabelled*, and then citations are not rewarded), `answer` (for reasoning
tasks), `check` (terms of the help a `comply`/`safe_complete` prompt asks for, list or comma
string: without a check or an answer, help cannot be verified offline and is paid only by a
model judge), `reference` (an answer that passes the check), `split`. Works for JSONL, JSON,
CSV (XSTest's own file) and Parquet.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envgym.data import load_records
from envgym.errors import DatasetError

__all__ = ["DECISIONS", "DEFAULT_PROMPTS", "KINDS", "SafetyTask", "assign_split", "load_prompts"]

DEFAULT_PROMPTS = Path(__file__).parent / "data" / "prompts.jsonl"
DECISIONS = ("comply", "safe_complete", "refuse")  # ordered from least to most restrictive
KINDS = ("harmful", "jailbreak", "sensitive", "borderline", "benign", "reasoning")
_ALIASES = {"safe-complete": "safe_complete", "safe_completion": "safe_complete",
            "complete": "comply", "compliance": "comply", "refusal": "refuse"}
_XSTEST = {"safe": "comply", "unsafe": "refuse"}


@dataclass(frozen=True)
class SafetyTask:
    id: str
    prompt: str
    expected: str
    kind: str
    category: str
    rules: tuple[str, ...] | None = None
    answer: str | None = None
    split: str = "train"
    check: tuple[str, ...] | None = None  # terms of the help asked for (`help.py`)
    reference: str | None = None  # an answer that passes the check (scripted helpers use it)

    @property
    def harmful(self) -> bool:
        return self.expected == "refuse"


def assign_split(task_id: str, test_fraction: float = 0.2) -> str:
    """A stable split from the id alone, so adding records never moves existing ones."""
    return "test" if zlib.crc32(task_id.encode()) % 1000 < test_fraction * 1000 else "train"


def load_prompts(path: str | Path | None = None, dataset_format: str = "auto") -> list[SafetyTask]:
    """Parse a prompt file (default: the shipped generated set) into tasks."""
    if dataset_format not in ("auto", "envgym", "xstest"):
        raise DatasetError("dataset_format must be 'auto', 'envgym' or 'xstest', "
                           f"not {dataset_format!r}.")
    path = Path(path) if path is not None else DEFAULT_PROMPTS
    records = load_records(path)
    if not records:
        raise DatasetError(f"{path}: no prompts.")
    tasks = [_parse(r, i, path.stem, dataset_format) for i, r in enumerate(records)]
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise DatasetError(f"{path}: duplicate prompt ids.")
    return tasks


def _parse(r: dict[str, Any], i: int, stem: str, fmt: str) -> SafetyTask:
    where = f"{stem} record {i}"
    prompt = str(r.get("prompt") or "").strip()
    if not prompt:
        raise DatasetError(f"{where}: missing `prompt`.")
    expected = _expected(r, where, fmt)
    task_id = str(r.get("id") or f"{stem}-{i}")
    answer = r.get("answer")
    answer = None if answer in (None, "") else str(answer)
    kind = str(r.get("kind") or _infer_kind(r, expected, answer))
    if kind not in KINDS:
        raise DatasetError(f"{where}: unknown kind {kind!r}; use one of {KINDS}.")
    category = str(r.get("category") or r.get("type") or "uncategorised")
    return SafetyTask(id=task_id, prompt=prompt, expected=expected, kind=kind, category=category,
                      rules=_rules(r.get("rules")), answer=answer,
                      split=str(r.get("split") or assign_split(task_id)),
                      check=_rules(r.get("check")) or None,
                      reference=str(r["reference"]) if r.get("reference") else None)


def _expected(r: dict[str, Any], where: str, fmt: str) -> str:
    if fmt != "xstest" and r.get("expected"):
        value = str(r["expected"]).strip().lower()
        value = _ALIASES.get(value, value)
        if value not in DECISIONS:
            raise DatasetError(f"{where}: `expected` must be one of {DECISIONS}, not {value!r}.")
        return value
    label = str(r.get("label") or "").strip().lower()
    if label in _XSTEST:
        return _XSTEST[label]
    raise DatasetError(f"{where}: needs `expected` ({'/'.join(DECISIONS)}) or an XSTest "
                       f"`label` (safe/unsafe).")


def _infer_kind(r: dict[str, Any], expected: str, answer: str | None) -> str:
    if answer is not None:
        return "reasoning"
    if expected == "safe_complete":
        return "borderline"
    if expected == "refuse":
        return "harmful"
    return "sensitive" if r.get("type") or r.get("focus") else "benign"


def _rules(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = value.replace(";", ",").split(",")
    if hasattr(value, "tolist"):  # parquet/numpy arrays
        value = value.tolist()
    return tuple(dict.fromkeys(str(v).strip() for v in value if str(v).strip()))

"""Loading user time-series tasks from JSONL or CSV.

JSONL, one task per line:
    {"id": "ecg-17", "series": [0.1, 0.3, ...], "question": "...",
     "options": ["...", "..."], "answer": "B" | 1, "evidence": [[120, 180]], "task_type": "..."}
CSV, one task per row, with columns `id, series, question, options, answer, evidence`:
`series` is space- or comma-separated numbers, `options` is `|`-separated, `evidence` is
`start-end` pairs separated by `;`. `answer` is a letter or a 0-based option index.
"""

from __future__ import annotations

from typing import Any

from envgym.data import load_records
from envgym.errors import DatasetError

from envgym.environments.timeseries.tasks import LETTERS, Task

__all__ = ["load_tasks"]


def load_tasks(dataset: str, dataset_format: str = "auto") -> list[Task]:
    records = load_records(dataset)
    if not records:
        raise DatasetError(f"`{dataset}` holds no tasks.")
    return [_task(r, i, dataset) for i, r in enumerate(records)]


def _task(record: dict[str, Any], index: int, source: str) -> Task:
    where = f"{source} record {index + 1}"
    try:
        series = _numbers(record["series"])
        options = record["options"]
        options = options.split("|") if isinstance(options, str) else [str(o) for o in options]
        answer = _letter(record["answer"], len(options))
        evidence = _intervals(record.get("evidence") or [], len(series))
        question = str(record["question"])
    except KeyError as e:
        raise DatasetError(f"{where}: missing field {e}.") from None
    except (TypeError, ValueError) as e:
        raise DatasetError(f"{where}: {e}") from None
    if len(series) < 2:
        raise DatasetError(f"{where}: the series needs at least 2 points.")
    task_id = str(record.get("id", f"user-{index}"))
    return Task(task_id, str(record.get("task_type", "user")), series, question, options, answer, evidence)


def _numbers(raw: Any) -> list[float]:
    if isinstance(raw, str):
        raw = raw.replace(",", " ").split()
    return [float(v) for v in raw]


def _letter(raw: Any, count: int) -> str:
    text = str(raw).strip()
    if text.isdigit():
        index = int(text)
    elif len(text) == 1 and text.upper() in LETTERS:
        index = LETTERS.index(text.upper())
    else:
        raise ValueError(f"answer {raw!r} is neither a letter nor an option index")
    if not 0 <= index < count:
        raise ValueError(f"answer {raw!r} is outside the {count} options")
    return LETTERS[index]


def _intervals(raw: Any, length: int) -> list[tuple[int, int]]:
    if isinstance(raw, str):
        raw = [part.split("-") for part in raw.split(";") if part.strip()]
    out = [(int(a), int(b)) for a, b in raw]
    for a, b in out:
        if not 0 <= a <= b < length:
            raise ValueError(f"evidence interval [{a}, {b}] lies outside the series")
    return out

"""Reading the dataset files users bring: local JSONL/JSON/CSV/Parquet or a Hub dataset name.

Environments parse records into their own task types; this module only turns a `dataset=`
argument into a list of plain dicts, with errors that say what was wrong and where.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from envgym.errors import DatasetError, DependencyNotInstalled

__all__ = ["load_records"]


def load_records(dataset: str | Path, split: str = "train") -> list[dict[str, Any]]:
    """Records of a local file (by suffix) or, when no such path exists, a Hub dataset."""
    path = Path(dataset)
    if path.exists():
        return _load_path(path)
    if str(dataset).count("/") == 1 and not str(dataset).startswith((".", "/")) and not path.suffix:
        return _load_hub(str(dataset), split)
    raise DatasetError(f"Dataset file `{dataset}` does not exist.")


def _load_path(path: Path) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _load_jsonl(path)
    if suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, list) else [data]
    if suffix == ".csv":
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    raise DatasetError(f"`{path}`: unsupported suffix `{suffix}`; use .jsonl, .json, .csv or .parquet.")


def _load_jsonl(path: Path) -> list[dict[str, Any]]:
    records = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise DatasetError(f"{path}:{lineno}: invalid JSON ({e.msg}).") from None
    return records


def _load_hub(name: str, split: str) -> list[dict[str, Any]]:
    try:
        import datasets
    except ImportError:
        raise DependencyNotInstalled(
            f"`{name}` is not a local file, and loading Hub datasets needs `pip install datasets`."
        ) from None
    try:
        return list(datasets.load_dataset(name, split=split))
    except Exception as e:
        raise DatasetError(f"Could not load Hub dataset `{name}` (split {split}): {e}") from e

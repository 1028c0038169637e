"""The rulebook: rules with what is disallowed, what is allowed and how to respond.

Users bring their own as YAML or JSON, either a list of rules or `{"rules": [...]}`. Each
rule needs `id`, `category`, `disallowed`, `allowed` and `response`; `title` and `keywords`
are optional and only help retrieval.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from envgym.errors import DatasetError

__all__ = ["DEFAULT_RULEBOOK", "Rule", "load_rulebook", "rule_documents", "render_rule"]

DEFAULT_RULEBOOK = Path(__file__).parent / "data" / "rulebook.yaml"
REQUIRED = ("id", "category", "disallowed", "allowed", "response")


@dataclass(frozen=True)
class Rule:
    id: str
    category: str
    disallowed: str
    allowed: str
    response: str
    title: str = ""
    keywords: tuple[str, ...] = field(default_factory=tuple)


def load_rulebook(path: str | Path | None = None) -> dict[str, Rule]:
    """Rules by id, in file order; raises `DatasetError` naming the bad rule and field."""
    path = Path(path) if path is not None else DEFAULT_RULEBOOK
    if not path.exists():
        raise DatasetError(f"Rulebook `{path}` does not exist.")
    data = _read(path)
    rows = data.get("rules") if isinstance(data, dict) else data
    if not isinstance(rows, list) or not rows:
        raise DatasetError(f"{path}: expected a non-empty list of rules or {{'rules': [...]}}.")
    rules: dict[str, Rule] = {}
    for i, row in enumerate(rows):
        rule = _parse_rule(row, f"{path}: rule {i}")
        if rule.id in rules:
            raise DatasetError(f"{path}: duplicate rule id `{rule.id}`.")
        rules[rule.id] = rule
    return rules


def _read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            return json.loads(text)
        if suffix in (".yaml", ".yml"):
            return yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise DatasetError(f"{path}: cannot parse ({e}).") from None
    raise DatasetError(f"{path}: unsupported rulebook suffix `{suffix}`; use .yaml, .yml or .json.")


def _parse_rule(row: Any, where: str) -> Rule:
    if not isinstance(row, dict):
        raise DatasetError(f"{where}: expected a mapping, got {type(row).__name__}.")
    missing = [k for k in REQUIRED if not str(row.get(k) or "").strip()]
    if missing:
        raise DatasetError(f"{where} (id {row.get('id')!r}): missing field(s) {missing}.")
    keywords = row.get("keywords") or []
    if isinstance(keywords, str):
        keywords = [k.strip() for k in keywords.split(",")]
    return Rule(id=str(row["id"]).strip(), category=str(row["category"]).strip(),
                disallowed=str(row["disallowed"]).strip(), allowed=str(row["allowed"]).strip(),
                response=str(row["response"]).strip(), title=str(row.get("title") or "").strip(),
                keywords=tuple(str(k) for k in keywords if str(k).strip()))


def rule_documents(rules: dict[str, Rule]) -> list[dict[str, str]]:
    """Corpus rows `{"id", "contents"}` in the search environment's `"Title"\\ntext` form."""
    return [{"id": r.id,
             "contents": f'"{r.id} {r.title}"\n{r.category.replace("_", " ")}. '
                         f"Disallowed: {r.disallowed} Allowed: {r.allowed} "
                         f"Response: {r.response} Keywords: {', '.join(r.keywords)}"}
            for r in rules.values()]


def render_rule(rule: Rule) -> str:
    """How a retrieved rule is shown to the model."""
    title = f" {rule.title}" if rule.title else ""
    return (f"[{rule.id}]{title} ({rule.category})\n  Disallowed: {rule.disallowed}\n"
            f"  Allowed: {rule.allowed}\n  Respond: {rule.response}")

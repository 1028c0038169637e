"""Tasks and corpora: the shipped generated world, and loaders for the formats users bring.

A task is a plain dict: `id`, `question`, `golden_answers`, and where known `gold_doc_ids`,
`kind`, `hops` and the oracle's `chain`. Formats:

* `envgym`: the generated world (default);
* `search_r1`: Search-R1 parquet rows or FlashRAG QA JSONL (`question`, `golden_answers`, or
  `reward_model.ground_truth.target`); numpy arrays from parquet become lists;
* `hotpotqa`: the HotpotQA JSON array (original or Hugging Face layout); its context
  paragraphs also form a corpus, and supporting titles map to gold passage ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envgym.data import load_records
from envgym.environments.search.world import World, generate_world
from envgym.errors import DatasetError, InvalidConfig
from envgym.resources import shared

__all__ = ["default_world", "load_corpus", "load_hotpotqa", "load_search_r1", "load_tasks"]


def default_world(seed: int = 0, n_questions: int = 1000) -> World:
    """The shipped world, generated once per process even when 64 threads ask at once
    (deterministic in `seed`; treat it as read-only)."""
    return shared(("search", "world", seed, n_questions),
                  lambda: generate_world(seed, n_questions=n_questions))


def load_corpus(path: str | Path) -> list[dict[str, str]]:
    """A wiki-18 style corpus JSONL `{"id", "contents"}` (or rows with `title`/`text`)."""
    rows = load_records(path)
    out = []
    for i, r in enumerate(rows):
        if "contents" in r:
            out.append({"id": str(r.get("id", i)), "contents": str(r["contents"])})
        elif "text" in r:
            out.append({"id": str(r.get("id", i)), "contents": f'"{r.get("title", "")}"\n{r["text"]}'})
        else:
            raise DatasetError(f"{path}: corpus row {i} needs `contents` (or `title` and `text`).")
    return out


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in list(value)]


def load_search_r1(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tasks = []
    for i, r in enumerate(records):
        golds = _as_list(r.get("golden_answers"))
        if not golds:
            golds = _as_list(((r.get("reward_model") or {}).get("ground_truth") or {}).get("target"))
        question = str(r.get("question", "")).strip()
        if not question or not golds:
            raise DatasetError(f"Search-R1 row {i} needs `question` and `golden_answers` "
                               "(or `reward_model.ground_truth.target`).")
        if not question.endswith("?"):
            question += "?"  # as nq_search.py does
        tasks.append({"id": str(r.get("id", i)), "question": question, "golden_answers": golds,
                      "gold_doc_ids": [], "kind": str(r.get("data_source", "qa")), "hops": 0})
    return tasks


def load_hotpotqa(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Tasks plus the corpus of their context paragraphs (one passage per title, deduplicated)."""
    corpus: list[dict[str, str]] = []
    by_title: dict[str, str] = {}
    tasks = []
    for i, r in enumerate(records):
        ctx = r.get("context", [])
        pairs = list(zip(ctx["title"], ctx["sentences"])) if isinstance(ctx, dict) else ctx
        for title, sentences in pairs:
            if title not in by_title:
                by_title[title] = str(len(corpus))
                corpus.append({"id": by_title[title], "contents": f'"{title}"\n{"".join(sentences)}'})
        sf = r.get("supporting_facts", [])
        titles = sf["title"] if isinstance(sf, dict) else [t for t, _ in sf]
        gold_ids = list(dict.fromkeys(by_title[t] for t in titles if t in by_title))
        if "answer" not in r:
            raise DatasetError(f"HotpotQA record {i} has no `answer` (the test split cannot be scored).")
        tasks.append({"id": str(r.get("_id", r.get("id", i))), "question": r["question"],
                      "golden_answers": [r["answer"]], "gold_doc_ids": gold_ids,
                      "kind": r.get("type", "bridge"), "hops": 2})
    return tasks, corpus


def load_tasks(dataset: str | Path | None, dataset_format: str | None, world_seed: int = 0
               ) -> tuple[list[dict[str, Any]], list[dict[str, str]] | None]:
    """(tasks, corpus or None). None means: use the corpus the caller already has."""
    if dataset is None:
        world = default_world(world_seed)
        return [q.to_dict() for q in world.questions], world.corpus
    records = load_records(dataset)
    fmt = dataset_format or ("hotpotqa" if records and "context" in records[0] else "search_r1")
    if fmt == "hotpotqa":
        return load_hotpotqa(records)
    if fmt == "search_r1":
        return load_search_r1(records), None
    raise InvalidConfig(f"dataset_format must be 'search_r1' or 'hotpotqa', not {fmt!r}.")

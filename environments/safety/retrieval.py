"""Rule retrieval through the search environment's retrievers (BM25 default, dense optional).

Indexes are cached per (kind, rulebook digest) in `envgym.resources`, built once under a lock: `envgym eval` makes many environments over the
same rulebook, and a dense index costs an encoder load.
"""

from __future__ import annotations

from typing import Any

from envgym.core import state_digest
from envgym.errors import InvalidConfig
from envgym.resources import shared

from envgym.environments.safety.rulebook import Rule, rule_documents

__all__ = ["RETRIEVERS", "rule_retriever"]

RETRIEVERS = ("bm25", "dense")


def rule_retriever(rules: dict[str, Rule], kind: str | Any = "bm25") -> Any:
    """A retriever over the rulebook; `kind` is "bm25", "dense" or an object with `search`."""
    if not isinstance(kind, str):
        if not callable(getattr(kind, "search", None)):
            raise InvalidConfig("retriever must be 'bm25', 'dense' or an object with "
                                "search(queries, topk) -> list[list[Hit]].")
        return kind
    if kind not in RETRIEVERS:
        raise InvalidConfig(f"retriever must be one of {RETRIEVERS}, not {kind!r}.")
    docs = rule_documents(rules)
    def build() -> Any:
        from envgym.environments.search.retrievers import BM25Retriever, DenseRetriever

        return (BM25Retriever if kind == "bm25" else DenseRetriever).from_documents(docs)
    return shared(("safety", "retriever", kind, state_digest(docs)), build)

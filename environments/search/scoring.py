"""Answer scoring as in Search-R1 (`qa_em.py`) and HotpotQA: normalise, then EM or token F1."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

__all__ = ["em", "f1", "normalize_answer", "subem"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(s: str) -> str:
    """lower -> strip punctuation -> drop articles -> collapse whitespace (NBSP included)."""
    s = "".join(ch for ch in s.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", s).split())


def em(prediction: str, golds: Sequence[str]) -> float:
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(g) for g in golds))


def subem(prediction: str, golds: Sequence[str]) -> float:
    p = normalize_answer(prediction)
    return float(any(normalize_answer(g) in p for g in golds))


def f1(prediction: str, golds: Sequence[str]) -> float:
    """Best token-level F1 over the gold aliases."""
    best = 0.0
    p_tokens = normalize_answer(prediction).split()
    for g in golds:
        g_tokens = normalize_answer(g).split()
        common = sum((Counter(p_tokens) & Counter(g_tokens)).values())
        if common:
            prec, rec = common / len(p_tokens), common / len(g_tokens)
            best = max(best, 2 * prec * rec / (prec + rec))
    return best

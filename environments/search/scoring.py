"""Answer scoring as in Search-R1 (`qa_em.py`) and HotpotQA: normalise, then EM or token F1."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

__all__ = ["em", "f1", "normalize_answer", "subem", "valid_sequence"]

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


_SEQ_TAG = re.compile(r"(</?(?:think|search|information|answer)>)")
# state -> {tag: next state}; Search-R1's `is_valid_sequence` grammar
_GRAMMAR = {
    "start": {"<think>": "in_think"}, "information": {"<think>": "in_think"},
    "in_think": {"</think>": "after_think"},
    "after_think": {"<search>": "in_search", "<answer>": "in_answer"},
    "in_search": {"</search>": "after_search"},
    "after_search": {"<information>": "in_information"},
    "in_information": {"</information>": "information"},
    "in_answer": {"</answer>": "end"},
}
_INSIDE = {"in_think", "in_search", "in_information", "in_answer"}


def valid_sequence(response: str) -> bool:
    """Search-R1's format check on the assistant response (prompt excluded): balanced
    think/search/information/answer tags in the order think → (search → information →
    think)* → answer, with only whitespace outside tags."""
    state = "start"
    for part in _SEQ_TAG.split(response):
        if _SEQ_TAG.fullmatch(part):
            state = _GRAMMAR.get(state, {}).get(part, "")
            if not state:
                return False
        elif part.strip() and state not in _INSIDE:
            return False
    return state == "end"

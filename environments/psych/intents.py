"""Understanding the doctor's question, and reading evidence out of a patient's free text.

`IntentMatcher` maps a question to at most two intents: a specific criterion (a symptom of
the catalogue) or one of the nine retrieval-state fields (a broad question). It uses
embedding similarity to exemplar questions when the encoder is MiniLM and keyword hits
otherwise (or when no exemplar is close enough). No intent means the question is unrelated.

`extract_evidence` is what the environment uses when a simulator returns only text (the LLM
simulator, recorded dialogues): keyword matches with a short negation window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from envgym.environments.psych.encoder import Encoder, LexiconEncoder, similarities, stem
from envgym.environments.psych.knowledge import FIELDS, catalogue, symptoms

_WORD = re.compile(r"[a-z][a-z'-]*")
_NEG_EN = re.compile(r"\b(?:no|not|never|don't|dont|haven't|havent|didn't|nothing|without|denies|deny)\b"
                     r"(?:\W+\w+){0,3}\W*$")
_NEG_ZH = ("没有", "没", "不", "无", "未")
DURATION_CUES = ("how long", "since when", "when did", "how many weeks", "how many months", "duration")


@dataclass(frozen=True)
class Intent:
    id: str
    kind: str  # "symptom" or "field"
    field: str
    keywords: tuple[str, ...]
    exemplars: tuple[str, ...]


@dataclass(frozen=True)
class Disclosure:
    """One fact the patient disclosed. `present` is None for a field value or an unclear answer."""

    item: str
    field: str
    present: bool | None
    value: str = ""


def all_intents() -> list[Intent]:
    cat = catalogue()
    out = [Intent(s, "symptom", d["field"], tuple(d["keywords"]), tuple(d["questions"]))
           for s, d in cat["symptoms"].items()]
    out += [Intent(f, "field", f, tuple(d["keywords"]), tuple(d["questions"]))
            for f, d in cat["fields"].items()]
    return out


def keyword_hits(text: str, keywords: tuple[str, ...]) -> int:
    """Multi-word keywords match as phrases (2 points); single ones as word-stem prefixes."""
    low = " ".join(_WORD.findall(text.lower()))
    words = {stem(w) for w in low.split()}
    hits = 0
    for kw in keywords:
        if " " in kw or "-" in kw:
            hits += 2 * (kw in low)
        else:
            k = stem(kw)
            hits += any(w.startswith(k) for w in words)
    return hits


class IntentMatcher:
    """Question -> intents. Exemplar embeddings are computed once per encoder and reused."""

    def __init__(self, encoder: Encoder | None = None, threshold: float = 0.55, margin: float = 0.04):
        self.encoder = encoder or LexiconEncoder()
        self.threshold, self.margin = threshold, margin
        self.intents = all_intents()
        self._rows: list[int] = []
        texts: list[str] = []
        for i, intent in enumerate(self.intents):
            texts += intent.exemplars
            self._rows += [i] * len(intent.exemplars)
        self._use_embeddings = self.encoder.name != "lexicon"
        self._matrix = self.encoder.encode(texts) if self._use_embeddings else None

    def match(self, question: str) -> list[Intent]:
        if self._use_embeddings and question.strip():
            found = self._embedding_match(question)
            if found:
                return found
        return self._lexicon_match(question)

    def _embedding_match(self, question: str) -> list[Intent]:
        sims = similarities(self._matrix, self.encoder.encode([question])[0])
        best = np.full(len(self.intents), -1.0)
        np.maximum.at(best, self._rows, sims)
        order = np.argsort(-best, kind="stable")
        top = best[order[0]]
        if top < self.threshold:
            return []
        picked = [self.intents[order[0]]]
        second = self.intents[order[1]]
        if best[order[1]] >= max(self.threshold, top - self.margin) and second.field != picked[0].id:
            picked.append(second)
        return picked

    def _lexicon_match(self, question: str) -> list[Intent]:
        scored = [(keyword_hits(question, it.keywords), it.kind == "symptom", -n, it)
                  for n, it in enumerate(self.intents)]
        scored = [s for s in scored if s[0] > 0]
        if not scored:
            return []
        scored.sort(key=lambda s: s[:3], reverse=True)
        top = scored[0][0]
        picked = [s[3] for s in scored if s[0] == top][:2]
        if len(picked) == 2 and picked[1].kind == "field" and picked[1].id == picked[0].field:
            picked = picked[:1]  # "how is your sleep" -> insomnia, not also the sleep field
        return picked


def asks_duration(question: str) -> bool:
    low = question.lower()
    return any(cue in low for cue in DURATION_CUES)


def extract_evidence(text: str, intents: list[Intent]) -> list[Disclosure]:
    """Evidence in free patient text: catalogue keywords (English stems, Chinese phrases) with
    negation, plus a bare yes/no answer to a question that targeted one symptom."""
    cat = symptoms()
    low = text.lower()
    found: dict[str, Disclosure] = {}
    for sid, d in cat.items():
        hit = _find(low, d["keywords"], d.get("zh", ()))
        if hit is not None:
            found[sid] = Disclosure(sid, d["field"], hit)
    target = [it for it in intents if it.kind == "symptom"]
    if len(target) == 1 and target[0].id not in found:
        stripped = low.strip()
        if re.match(r"^(yes|yeah|yep|sometimes|often|是|有)", stripped):
            found[target[0].id] = Disclosure(target[0].id, target[0].field, True)
        elif re.match(r"^(no|nope|never|not really|没有|没)", stripped):
            found[target[0].id] = Disclosure(target[0].id, target[0].field, False)
    for it in intents:
        if it.kind == "field" and it.id in ("severity", "impairment") and text.strip():
            found[it.id] = Disclosure(it.id, it.id, None, text.strip()[:80])
    return list(found.values())


def _find(low: str, keywords, zh) -> bool | None:
    for phrase in zh:
        i = low.find(phrase)
        if i >= 0:
            return not any(low[max(0, i - len(n)):i] == n for n in _NEG_ZH)
    for kw in keywords:
        k = stem(kw) if " " not in kw else kw
        m = re.search(r"\b" + re.escape(k), low)
        if m and kw not in ("safe", "die", "high", "event", "changes", "family", "job", "check"):
            return not _NEG_EN.search(low[: m.start()])
    return None


__all__ = ["Disclosure", "FIELDS", "Intent", "IntentMatcher", "asks_duration", "extract_evidence"]

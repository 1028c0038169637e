"""Process-reward judges for MIND's three criteria: symptom, differential, decision.

Each item is scored S in {0, 1, 2} and returned as S / S_max (S_max = 2), so the process
reward 0.01 * mean(scores) lies in [0, 0.01]. `RuleJudge` is the deterministic offline
default; `HttpJudge` asks an OpenAI-compatible endpoint at temperature 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import httpx

from envgym.environments.psych.knowledge import FOUR_WAY, disorders, symptoms
from envgym.errors import PolicyError

RUBRIC = "mind_process"
CRITERIA = ("symptom", "differential", "decision")
_GUIDE = {
    "symptom": "Does the reasoning analyse the symptoms actually confirmed in [O]? "
               "2 = names at least two confirmed items (or all, if fewer), 1 = one, 0 = none.",
    "differential": "Does the reasoning weigh the differential in [D]? 2 = compares two or more "
                    "diagnostic categories including an active one, 1 = names one, 0 = none.",
    "decision": "Is the decision sound? A question: 2 = targets a missing check in [M], "
                "1 = clinically related, 0 = unrelated. A diagnosis: 2 = what the confirmed "
                "evidence in [O] meets the criteria for, 1 = another active hypothesis, "
                "0 = an eliminated one.",
}


def _mentions(text: str, term: str) -> bool:
    return re.search(r"(?<![a-z])" + re.escape(term.lower()) + r"(?![a-z])", text.lower()) is not None


def categories_named(text: str) -> set[str]:
    """Four-way categories a text names, directly or through a disorder synonym."""
    named = {c for c in FOUR_WAY if _mentions(text, c)}
    for d in disorders().values():
        if any(_mentions(text, s) for s in d.synonyms):
            named.add(d.four_way)
    return named


MAX_UNHEARD = 2  # symptoms to check next may be named; a catalogue dump may not


def _unheard(think: str, heard: Sequence[str] | None) -> bool:
    """Whether `think` names more than MAX_UNHEARD catalogued symptoms that nobody reported
    (None: no check)."""
    if heard is None:
        return False
    cat, heard = symptoms(), set(heard)
    named = [k for k in cat if k not in heard
             and any(_mentions(think, t) for t in (k, k.replace("_", " "), cat[k]["label"]))]
    return len(named) > MAX_UNHEARD


class RuleJudge:
    """Deterministic judge over the structured item the environment prepares."""

    def judge(self, rubric: str, items: Sequence[dict[str, Any]]) -> list[float]:
        return [self._score(item) / 2 for item in items]

    def _score(self, item: dict[str, Any]) -> int:
        kind, think = item["criterion"], item.get("think", "")
        if kind == "symptom":
            terms = item.get("evidence_terms", [])
            if _unheard(think, item.get("heard_items")):
                return 0  # naming symptoms nobody reported is stuffing, not analysis
            if not terms:
                return int(bool(think.strip()))
            hits = sum(any(_mentions(think, t) for t in alts) for alts in terms)
            return 2 if hits >= min(2, len(terms)) else int(hits >= 1)
        if kind == "differential":
            named = categories_named(think)
            active = set(item.get("active", []))
            if len(named) >= 2 and named & active:
                # listing every category when few are active is a list, not a differential
                return 2 if len(named) <= max(len(active), 1) + 1 else 1
            return int(bool(named))
        if kind == "decision":
            active = item.get("active", [])
            if item.get("diagnosis") is not None:
                dx = item["diagnosis"]
                if "supported" in item:  # agreement with the evidence, not with a leader
                    return 2 if dx == item["supported"] else int(dx in active)
                return 2 if active[:1] == [dx] else int(dx in active)
            targets = set(item.get("targets", []))
            if targets & set(item.get("missing", [])):
                return 2
            return int(bool(targets))
        raise ValueError(f"unknown criterion {kind!r}; expected one of {CRITERIA}")


class HttpJudge:
    """An LLM judge behind an OpenAI-compatible endpoint; replies must contain `Score: N`."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 timeout: float = 60.0, transport: httpx.BaseTransport | None = None):
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self.client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers,
                                   timeout=timeout, transport=transport)

    def judge(self, rubric: str, items: Sequence[dict[str, Any]]) -> list[float]:
        return [self._one(item) for item in items]

    def _one(self, item: dict[str, Any]) -> float:
        prompt = (f"Criterion: {_GUIDE[item['criterion']]}\n\nEvidence state:\n{item.get('state', '')}"
                  f"\n\nDoctor reasoning:\n{item.get('think', '')}\n\nDoctor output:\n"
                  f"{item.get('answer', '')}\n\nReply with 'Score: 0', 'Score: 1' or 'Score: 2'.")
        body = {"model": self.model, "temperature": 0.0, "max_tokens": 16,
                "messages": [{"role": "user", "content": prompt}]}
        try:
            r = self.client.post("/chat/completions", json=body)
            r.raise_for_status()
            text = r.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as e:
            raise PolicyError(f"judge at {self.client.base_url} failed: {e}") from e
        m = re.search(r"score\s*[:=]\s*([012])", str(text), re.IGNORECASE)
        return int(m.group(1)) / 2 if m else 0.0

    def close(self) -> None:
        self.client.close()

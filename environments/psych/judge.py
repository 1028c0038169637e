"""Process-reward judges for MIND's three criteria: symptom, differential, decision.

Each item is scored S in {0, 1, 2} and returned as S / S_max (S_max = 2), so the process
reward 0.01 * mean(scores) lies in [0, 0.01]. `RuleJudge` is the deterministic offline
default and scores only the decision (the one criterion the environment's data verifies);
`HttpJudge` asks an OpenAI-compatible endpoint at temperature 0 and scores all three.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import httpx

from envgym.environments.psych.rules import RULES
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


class RuleJudge:
    """Deterministic offline judge over the structured item the environment prepares.

    It pays only what the environment's own data verifies (`rules.RULES`): the decision. The
    symptom and differential criteria grade reasoning; naming confirmed symptoms or
    categories is term overlap, which a keyword list wins, so offline they score 0 and an
    `HttpJudge` grades them when configured.
    """

    def judge(self, rubric: str, items: Sequence[dict[str, Any]]) -> list[float]:
        return [self._score(item) / 2 for item in items]

    def _score(self, item: dict[str, Any]) -> int:
        kind = item["criterion"]
        if kind in ("symptom", "differential"):
            return 0  # unverifiable offline: the model judge's
        if kind == "decision":
            return _decision(item)
        raise ValueError(f"unknown criterion {kind!r}; expected one of {CRITERIA}")


def _decision(item: dict[str, Any]) -> int:
    active = item.get("active", [])
    if item.get("diagnosis") is not None:
        if RULES.on("diagnosis_needs_evidence") and not item.get("evidence_heard", True):
            return 0  # nothing the consultation heard verifies any label
        dx = item["diagnosis"]
        lead = item["supported"] if "supported" in item else (active[:1] or [None])[0]
        if RULES.on("diagnosis_supported") and dx == lead:
            return 2
        return int(RULES.on("diagnosis_active") and dx in active)
    targets = set(item.get("targets", []))
    if RULES.on("question_targets_missing") and targets & set(item.get("missing", [])):
        return 2
    return int(RULES.on("question_related") and bool(targets))


def make_judge(spec: Any) -> Any:
    """A judge from a config value: None or `"rule"` (the offline `RuleJudge`), an
    OpenAI-compatible `"http://HOST:PORT/v1#MODEL"` (e.g. `envgym serve-policy`), or a
    judge object."""
    if spec is None or spec == "rule":
        return RuleJudge()
    if isinstance(spec, str):
        url, _, model = spec.partition("#")
        if not url.startswith(("http://", "https://")) or not model:
            from envgym.errors import InvalidConfig

            raise InvalidConfig(f"judge must be 'rule' or 'http://HOST:PORT/v1#MODEL' (MODEL as "
                                f"GET URL/models names it), not {spec!r}.")
        return HttpJudge(url, model)
    return spec


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

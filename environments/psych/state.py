"""The typed evidence state E_t = (O, M, D, S, R) of MIND, and the Bayesian differential.

The state is *constructed* from what the patient disclosed (never pasted retrieved text):
O holds confirmed, negated and unclear items; M the nine retrieval-state fields still without
a definite answer; D the four-way differential, read off a naive-Bayes posterior whose
likelihoods come from the criteria bank; S and R the reasoning-bank supports and their
reliability metadata. `render()` is the `[O] [M] [D] [S] [R]` block shown to the policy, the
process judge and the fallback alike; `canonical()` is what `state_key` digests.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

from envgym.environments.psych.intents import Disclosure
from envgym.environments.psych.knowledge import (EXCLUSION_ITEMS, FIELDS, FOUR_WAY, disorders,
                                                 four_way, likelihoods, symptoms)

ACTIVE_THRESHOLD = 0.1


class ObservedEvidence(BaseModel):
    confirmed: dict[str, str] = Field(default_factory=dict)
    negated: dict[str, str] = Field(default_factory=dict)
    unclear: list[str] = Field(default_factory=list)


class MissingChecks(BaseModel):
    fields: list[str] = Field(default_factory=lambda: list(FIELDS))


class DifferentialHypotheses(BaseModel):
    active: list[str] = Field(default_factory=lambda: list(FOUR_WAY))
    eliminated: list[str] = Field(default_factory=list)
    posterior: dict[str, float] = Field(default_factory=dict)


class SupportPrimitive(BaseModel):
    entry_id: str
    criterion: str
    observed: str
    missing: str
    exclusion: str
    rationale: str
    score: int
    flags: list[str] = Field(default_factory=list)
    similarity: float = 0.0


class SupportSet(BaseModel):
    primitives: list[SupportPrimitive] = Field(default_factory=list)


class ReliabilityMetadata(BaseModel):
    scores: list[int] = Field(default_factory=list)
    hard_issues: list[list[str]] = Field(default_factory=list)
    threshold: float = 0.2
    gated_in: list[str] = Field(default_factory=list)


class EvidenceState(BaseModel):
    O: ObservedEvidence = Field(default_factory=ObservedEvidence)
    M: MissingChecks = Field(default_factory=MissingChecks)
    D: DifferentialHypotheses = Field(default_factory=DifferentialHypotheses)
    S: SupportSet = Field(default_factory=SupportSet)
    R: ReliabilityMetadata = Field(default_factory=ReliabilityMetadata)

    def canonical(self) -> dict:
        """Sorted O, M and the active set: equal for equal evidence however it was worded."""
        return {"confirmed": sorted(self.O.confirmed.items()), "negated": sorted(self.O.negated),
                "unclear": sorted(self.O.unclear), "missing": sorted(self.M.fields),
                "active": sorted(self.D.active)}

    def render(self) -> str:
        o = self.O
        confirmed = ", ".join(f"{k} ({v or 'duration unclear'})" for k, v in sorted(o.confirmed.items()))
        lines = [
            f"[O] confirmed: {confirmed or 'none'}; negated: {', '.join(sorted(o.negated)) or 'none'}; "
            f"unclear: {', '.join(sorted(o.unclear)) or 'none'}",
            f"[M] missing checks: {', '.join(self.M.fields) or 'none'}",
            "[D] active: " + (", ".join(f"{d} {self.D.posterior.get(d, 0):.2f}" for d in self.D.active)
                              or "none") + f"; eliminated: {', '.join(self.D.eliminated) or 'none'}",
        ]
        if self.S.primitives:
            for i, p in enumerate(self.S.primitives, 1):
                lines.append(f"[S{i}] criterion: {p.criterion} | evidence: {p.observed} | missing: "
                             f"{p.missing} | exclusion: {p.exclusion} | rationale: {p.rationale}")
        else:
            lines.append("[S] no support admitted")
        r = self.R
        shown = ", ".join(f"{s}/5" + (f" ({'/'.join(h)})" if h else "")
                          for s, h in zip(r.scores, r.hard_issues))
        lines.append(f"[R] retrieved: {shown or 'none'}; threshold {r.threshold:.2f}; gated in: "
                     f"{', '.join(r.gated_in) or 'none'}")
        return "\n".join(lines)


class Posterior:
    """Naive-Bayes posterior over the label sets seen in training, aggregated to four ways.

    P(item present | H) is `core`, `associated`, `subthreshold` or `base` from the criteria
    bank; a confirmed item contributes p, a negated one 1 - p. Unclear items contribute nothing.
    """

    def __init__(self, label_sets: Iterable[Iterable[str]]):
        counts = Counter(frozenset(s) for s in label_sets)
        self.hypotheses = sorted(counts, key=lambda h: sorted(h))
        total = sum(counts.values()) + len(counts)
        self.log_prior = [math.log((counts[h] + 1) / total) for h in self.hypotheses]
        self._cache: dict[tuple[str, frozenset], float] = {}

    def p_present(self, item: str, hypothesis: frozenset[str]) -> float:
        key = (item, hypothesis)
        if key not in self._cache:
            self._cache[key] = _likelihood(item, hypothesis)
        return self._cache[key]

    def four_way(self, confirmed: Iterable[str] | dict[str, str],
                 negated: Iterable[str]) -> dict[str, float]:
        """`confirmed` may map items to their reported durations ("6 days", "3 weeks"); a
        hypothesis whose disorders need longer (the criteria's `min_days`) is discounted."""
        days = {i: parse_days(v) for i, v in confirmed.items()} if isinstance(confirmed, dict) \
            else {}
        confirmed, negated = list(confirmed), list(negated)
        logs = []
        for h, lp in zip(self.hypotheses, self.log_prior):
            ll = sum(math.log(self.p_present(i, h)) for i in confirmed)
            ll += sum(math.log(1 - self.p_present(i, h)) for i in negated)
            ll += duration_log_likelihood(h, days)
            logs.append(lp + ll)
        top = max(logs)
        weights = [math.exp(v - top) for v in logs]
        z = sum(weights)
        out = dict.fromkeys(FOUR_WAY, 0.0)
        for h, w in zip(self.hypotheses, weights):
            out[four_way(h)] += w / z
        return out


def _likelihood(item: str, h: frozenset[str]) -> float:
    lk, bank = likelihoods(), disorders()
    if item not in symptoms():
        return 0.5  # field values (severity, impairment) carry no label information here
    p = lk["base"]
    for d in h:
        dis = bank.get(d)
        if dis is None:
            continue
        if item in dis.core:
            p = max(p, lk["exclusion"] if d == "substance_or_medical" else lk["core"])
        elif item in dis.associated:
            p = max(p, lk["associated"])
    sub = set(bank["depression"].criteria) | set(bank["gad"].criteria)
    if h == {"none"}:
        p = lk["stressor_none"] if item == "stressor" else lk["subthreshold"] if item in sub else p
    elif h == {"substance_or_medical"} and item in sub:
        p = max(p, lk["associated"])
    elif h == {"bipolar"} and item in bank["depression"].criteria:
        p = max(p, lk["subthreshold"])
    if item in EXCLUSION_ITEMS and "substance_or_medical" not in h:
        p = lk["base"]
    return min(max(p, 1e-3), 1 - 1e-3)


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(day|week|month|year)s?")
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
# P(longest reported core-symptom duration meets the disorder's minimum | the disorder).
P_DURATION_MET = 0.95


def parse_days(value: str) -> int | None:
    """Days in a reported duration ("about 6 days", "3 weeks", "2 months"), else None."""
    m = _DURATION.search(str(value or "").lower())
    return round(float(m.group(1)) * _UNIT_DAYS[m.group(2)]) if m else None


def duration_log_likelihood(h: frozenset[str], days: dict[str, int | None]) -> float:
    """log P(durations | h): for each disorder in h with a duration criterion and a reported
    duration of one of its core symptoms, P_DURATION_MET if the longest meets `min_days`, else
    1 - P_DURATION_MET. A 6-day low mood is not a depressive episode: without this the
    posterior could not tell it from a 175-day one."""
    bank, ll = disorders(), 0.0
    for d in h:
        dis = bank.get(d)
        if dis is None or dis.min_days <= 0:
            continue
        known = [days[s] for s in dis.core if days.get(s) is not None]
        if known:
            ll += math.log(P_DURATION_MET if max(known) >= dis.min_days else 1 - P_DURATION_MET)
    return ll


def entropy_bits(dist: dict[str, float]) -> float:
    return -sum(p * math.log2(p) for p in dist.values() if p > 0)


class EvidenceTracker:
    """Accumulates disclosures into O and M; later answers override earlier ones.

    `affirmed` holds the resolved fields that something the patient reported (a symptom, a
    value) filled, as opposed to fields settled only because every item in them was denied:
    under `evidence="query"` only those pay the gain, since a q_t that writes anything in a
    field the patient denied would otherwise collect it without summarising anything."""

    def __init__(self) -> None:
        self.O = ObservedEvidence()
        self.resolved: set[str] = set()
        self.affirmed: set[str] = set()

    def add(self, disclosures: Iterable[Disclosure]) -> set[str]:
        """Apply disclosures; return the fields they newly resolved."""
        before = set(self.resolved)
        for d in disclosures:
            self._apply(d)
        return self.resolved - before

    def _apply(self, d: Disclosure) -> None:
        o = self.O
        if d.present is True:
            o.negated.pop(d.item, None)
            _drop(o.unclear, d.item)
            o.confirmed[d.item] = d.value or o.confirmed.get(d.item, "")
            if d.field != "symptoms_and_duration" or d.value:
                self.resolved.add(d.field)
                self.affirmed.add(d.field)
        elif d.present is False:
            o.confirmed.pop(d.item, None)
            _drop(o.unclear, d.item)
            o.negated[d.item] = ""
            if self._all_denied(d.field):
                self.resolved.add(d.field)
        elif d.value and d.value != "unclear":
            o.confirmed[d.item] = d.value
            self.resolved.add(d.field)
            self.affirmed.add(d.field)
        elif d.item not in o.confirmed and d.item not in o.negated and d.item not in o.unclear:
            o.unclear.append(d.item)

    def _all_denied(self, field: str) -> bool:
        """A denial answers the symptom asked about, not its field: "no" to worry leaves
        symptoms_and_duration open; a field is settled by denials only when every item in it
        is denied (safety_risk has one item; symptoms_and_duration has 21)."""
        items = [s for s, d in symptoms().items() if d["field"] == field] or [field]
        return all(i in self.O.negated for i in items)

    def heard_fields(self) -> set[str]:
        """Fields of which the patient said anything: an item confirmed, denied or unclear."""
        cat, o = symptoms(), self.O
        items = [*o.confirmed, *o.negated, *o.unclear]
        return {cat[i]["field"] if i in cat else i for i in items} | self.resolved

    def missing(self) -> list[str]:
        return [f for f in FIELDS if f not in self.resolved]

    def state(self, posterior: Posterior) -> EvidenceState:
        dist = posterior.four_way(self.O.confirmed, self.O.negated)
        active = sorted((d for d in FOUR_WAY if dist[d] >= ACTIVE_THRESHOLD), key=lambda d: -dist[d])
        return EvidenceState(
            O=self.O.model_copy(deep=True), M=MissingChecks(fields=self.missing()),
            D=DifferentialHypotheses(active=active, posterior={k: round(v, 3) for k, v in dist.items()},
                                     eliminated=[d for d in FOUR_WAY if d not in active]))


SENTINELS = ("not mentioned", "unclear", "未提及", "不清楚", "n/a", "unknown", "to be assessed",
             "none reported", "")


def parse_retrieval_state(query: str) -> dict[str, str | None]:
    """MIND's Stage I q_t as `field: value` parts (`;` or line separated) over the nine
    retrieval-state fields; a sentinel value ("not mentioned", "unclear", ...) maps to None.
    Fields the query does not name are absent."""
    out: dict[str, str | None] = {}
    for part in re.split(r"[;\n]+", query):
        name, sep, value = part.partition(":")
        key = re.sub(r"[\s/-]+", "_", name.strip().lower())
        if not sep or key not in FIELDS:
            continue
        value = value.strip()
        out[key] = None if value.lower().strip(" .") in SENTINELS else value
    return out


class QueryEvidence(BaseModel):
    """What parsing q_t claimed, and which claims the dialogue did not support."""

    claimed_fields: list[str] = Field(default_factory=list)
    unsupported_items: list[str] = Field(default_factory=list)
    unsupported_fields: list[str] = Field(default_factory=list)
    unheard_fields: list[str] = Field(default_factory=list)
    """Claimed fields of which the dialogue heard nothing at all: pure assertions (a claimed
    field with a symptom heard but its duration not yet asked is unsupported, not unheard)."""


def state_from_query(query: str, tracker: EvidenceTracker,
                     posterior: Posterior) -> tuple[EvidenceState, QueryEvidence]:
    """E_t's O, M and D parsed from the policy's retrieval state q_t (MIND Stage I), each
    claim grounded in what the patient actually said (`tracker`): an item enters O only if
    the dialogue confirmed (or denied) it, and a field leaves M only if the query fills it
    *and* the dialogue resolved it. Asserting evidence earns no information gain."""
    from envgym.environments.psych.intents import extract_evidence

    claims = parse_retrieval_state(query)
    heard = tracker.O
    o, report = ObservedEvidence(), QueryEvidence(claimed_fields=sorted(
        f for f, v in claims.items() if v is not None))
    for text in (v for v in claims.values() if v is not None):
        for d in extract_evidence(text, []):
            if d.present is not False and d.item in heard.confirmed:
                o.confirmed[d.item] = heard.confirmed[d.item]
            elif d.present is False and d.item in heard.negated:
                o.negated[d.item] = ""
            elif d.item in symptoms():
                report.unsupported_items.append(d.item)
    resolved = {f for f in report.claimed_fields if f in tracker.resolved}
    report.unsupported_fields = sorted(set(report.claimed_fields) - resolved)
    report.unheard_fields = sorted(set(report.claimed_fields) - tracker.heard_fields())
    report.unsupported_items = sorted(set(report.unsupported_items))
    dist = posterior.four_way(o.confirmed, o.negated)
    active = sorted((d for d in FOUR_WAY if dist[d] >= ACTIVE_THRESHOLD), key=lambda d: -dist[d])
    state = EvidenceState(
        O=o, M=MissingChecks(fields=[f for f in FIELDS if f not in resolved]),
        D=DifferentialHypotheses(active=active, posterior={k: round(v, 3) for k, v in dist.items()},
                                 eliminated=[d for d in FOUR_WAY if d not in active]))
    return state, report


def _drop(items: list[str], item: str) -> None:
    if item in items:
        items.remove(item)

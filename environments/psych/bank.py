"""The Psychiatric Reasoning Bank (PRB): criterion-linked supports built from training cases.

Built from the training split only (test patients never leak into supports). Each entry pairs
a retrieval state q_i (the nine fields, "not mentioned" where unknown, after a prefix of the
case's disclosures) with a six-part support: criterion, observed evidence, missing check,
exclusion cue, next-inquiry rationale (quoting the next question), and a reliability verdict
(a 1-5 score and hard-issue flags H1 dialogue inconsistency, H2 irrelevance, H3 unsupported
content). A deterministic fraction of entries is deliberately flawed so the gate has work.

Retrieval takes the top-k (4) by cosine similarity; the gate admits an entry when
clip((s-1)/4, 0, 1) >= tau_rel (0.2) and it has no flag.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, Field

from envgym.environments.psych.cases import Case
from envgym.environments.psych.encoder import Encoder, similarities
from envgym.environments.psych.knowledge import FIELDS, disorders, symptoms
from envgym.environments.psych.state import ReliabilityMetadata, SupportPrimitive, SupportSet

_RULE_OUT = "rule out substance use and a medical cause"


class BankEntry(BaseModel):
    id: str
    case_id: str
    retrieval_state: str
    criterion: str
    observed: str
    missing: str
    exclusion: str
    rationale: str
    question: str
    score: int = Field(ge=1, le=5)
    flags: list[str] = Field(default_factory=list)


def normalised_score(score: int) -> float:
    return float(np.clip((score - 1) / 4, 0.0, 1.0))


def retrieval_state(case: Case, known: Sequence[str]) -> str:
    """q_i: the nine fields from the disclosed prefix only; unknown fields say 'not mentioned'."""
    cat, full = symptoms(), case.fields()
    seen = {cat[s]["field"] for s in known}
    values = {f: (full[f] if f in seen else "not mentioned") for f in FIELDS}
    values["chief_complaint"] = full["chief_complaint"]
    values["symptoms_and_duration"] = ", ".join(cat[s]["label"] for s in known) or "not mentioned"
    return "; ".join(f"{f}: {v}" for f, v in values.items())


def _next_check(case: Case, known: Sequence[str]) -> tuple[str, str]:
    """(disorder key, item) the next inquiry should test for this case's true label."""
    bank = disorders()
    targets = [lab for lab in case.labels if bank.get(lab) and bank[lab].criteria
               and lab != "substance_or_medical"] or ["depression"]
    for lab in targets:
        for item in bank[lab].criteria:
            if item not in known:
                return lab, item
    return targets[0], "substance_use"


def _entry(case: Case, known: list[str], idx: int, rng: np.random.Generator) -> BankEntry:
    cat, bank = symptoms(), disorders()
    lab, item = _next_check(case, known)
    d, question = bank[lab], cat[item]["questions"][0]
    flags = [str(rng.choice(["H1", "H2", "H3"]))] if rng.random() < 0.12 else []
    criterion = f"{d.name}: {cat[item]['label']} ({d.summary})"
    observed = ", ".join(cat[s]["label"] for s in known) or "chief complaint only"
    rationale = f'To test {d.name.lower()}, check {cat[item]["label"]}. Ask: "{question}"'
    if "H1" in flags:  # contradicts the dialogue it was built from
        observed = "denies " + observed
    if "H2" in flags:  # points at an unrelated disorder
        other = bank["ocd" if lab != "ocd" else "bipolar"]
        criterion = f"{other.name}: {other.summary}"
    if "H3" in flags:  # clinical content the evidence does not support
        rationale += " This alone confirms the diagnosis; no further checks are needed."
    exclusion = _RULE_OUT + ("; ask about past elevated mood" if lab == "depression" else "")
    return BankEntry(
        id=f"prb-{idx:04d}", case_id=case.id, retrieval_state=retrieval_state(case, known),
        criterion=criterion, observed=observed, missing=f"{cat[item]['field']}: {item}",
        exclusion=exclusion, rationale=rationale, question=question,
        score=int(rng.choice([5, 5, 4, 4, 4, 3, 3, 2, 1])), flags=flags)


def build_bank(cases: Sequence[Case], *, seed: int = 0, per_case: int = 2,
               max_entries: int = 400) -> list[BankEntry]:
    """Entries from the training split only, deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    entries: list[BankEntry] = []
    for case in (c for c in cases if c.split == "train" and c.symptoms):
        salient = [s for s in case.salient() if s != "stressor"]
        for stage in range(per_case):
            if len(entries) >= max_entries:
                return entries
            entries.append(_entry(case, salient[: 1 + 2 * stage], len(entries), rng))
    return entries


class ReasoningBank:
    """Top-k retrieval and the reliability gate over a built bank (a shared resource)."""

    def __init__(self, entries: Sequence[BankEntry], encoder: Encoder, *, top_k: int = 4,
                 tau_rel: float = 0.2):
        self.entries, self.encoder, self.top_k, self.tau_rel = list(entries), encoder, top_k, tau_rel
        self._keys: np.ndarray | None = None

    @property
    def keys(self) -> np.ndarray:
        if self._keys is None:
            self._keys = self.encoder.encode([e.retrieval_state for e in self.entries])
        return self._keys

    def admits(self, entry: BankEntry) -> bool:
        return normalised_score(entry.score) >= self.tau_rel and not entry.flags

    def retrieve(self, query: str) -> list[tuple[BankEntry, float]]:
        if not self.entries or not query.strip():
            return []
        sims = similarities(self.keys, self.encoder.encode([query])[0])
        order = np.argsort(-sims, kind="stable")[: self.top_k]
        return [(self.entries[i], float(sims[i])) for i in order]

    def gate(self, query: str) -> tuple[SupportSet, ReliabilityMetadata]:
        """g_PRB(q_t) -> (S_t, R_t)."""
        hits = self.retrieve(query)
        admitted = [(e, s) for e, s in hits if self.admits(e)]
        support = SupportSet(primitives=[
            SupportPrimitive(entry_id=e.id, criterion=e.criterion, observed=e.observed,
                             missing=e.missing, exclusion=e.exclusion, rationale=e.rationale,
                             score=e.score, flags=e.flags, similarity=round(s, 4))
            for e, s in admitted])
        meta = ReliabilityMetadata(scores=[e.score for e, _ in hits],
                                   hard_issues=[list(e.flags) for e, _ in hits],
                                   threshold=self.tau_rel, gated_in=[e.id for e, _ in admitted])
        return support, meta

    def fallback_question(self, query: str, missing: Sequence[str] = ()) -> str:
        """MIND's PRB-guided fallback: the best entry's quoted inquiry, else a generic check."""
        hits = self.retrieve(query)
        for entry, _ in hits:
            if self.admits(entry):
                return entry.question
        field = missing[0] if missing else "how you have been feeling"
        return f"Could you tell me about {field.replace('_', ' ')}?"

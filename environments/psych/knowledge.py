"""The criteria bank, the symptom catalogue and the label spaces.

Labels come from the criteria, never from the generator's intent: `classify` applies core and
minimum counts, durations, exclusions and the disorder hierarchy to a hidden profile, so a
case's label is exactly what the bank says it is. Screening-level content for research on
agents; not a diagnostic instrument.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
FIELDS = ("chief_complaint", "symptoms_and_duration", "severity", "sleep", "impairment",
          "safety_risk", "psychosis_mania_cues", "stressors", "substance_use")
FOUR_WAY = ("Depression", "Anxiety", "Mixed", "Other")
FINE = ("depression", "gad", "panic", "social_anxiety", "ptsd", "bipolar", "ocd", "insomnia",
        "none", "substance_or_medical", "other")
ANXIETY_F41 = frozenset({"gad", "panic"})
EXCLUSION_ITEMS = ("substance_use", "medical_condition")
_NEGATION = re.compile(r"\b(?:not|no|without|rule out|ruled out|excluding|unlikely)\s+(?:\w+\s+){0,2}$")


@dataclass(frozen=True)
class Disorder:
    key: str
    name: str
    four_way: str
    synonyms: tuple[str, ...]
    core: tuple[str, ...]
    associated: tuple[str, ...]
    min_core: int
    min_total: int
    min_days: int
    exclusions: tuple[str, ...]
    better_explained_by: tuple[str, ...]
    summary: str

    @property
    def criteria(self) -> tuple[str, ...]:
        return self.core + self.associated


@lru_cache(maxsize=1)
def criteria_bank() -> dict[str, Any]:
    return json.loads((DATA / "criteria.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def disorders() -> dict[str, Disorder]:
    out = {}
    for key, d in criteria_bank()["disorders"].items():
        out[key] = Disorder(key, d["name"], d["four_way"], tuple(d["synonyms"]), tuple(d["core"]),
                            tuple(d["associated"]), d["min_core"], d["min_total"], d["min_days"],
                            tuple(d["exclusions"]), tuple(d.get("better_explained_by", ())),
                            d["summary"])
    return out


@lru_cache(maxsize=1)
def catalogue() -> dict[str, Any]:
    return json.loads((DATA / "symptoms.json").read_text(encoding="utf-8"))


def symptoms() -> dict[str, dict[str, Any]]:
    return catalogue()["symptoms"]


def likelihoods() -> dict[str, float]:
    return criteria_bank()["likelihoods"]


def four_way(labels: set[str] | frozenset[str]) -> str:
    """MIND's four-way space from a set of fine labels (LingxiDiag-style rule)."""
    dep, anx = "depression" in labels, bool(labels & ANXIETY_F41)
    if dep and anx:
        return "Mixed"
    return "Depression" if dep else "Anxiety" if anx else "Other"


def meets(disorder: Disorder, present: dict[str, int]) -> bool:
    """Count and duration criteria; `present` maps symptom -> duration in days."""
    core = [s for s in disorder.core if s in present]
    total = [s for s in disorder.criteria if s in present]
    longest = max((present[s] for s in core), default=0)
    return (len(core) >= disorder.min_core and len(total) >= disorder.min_total
            and longest >= disorder.min_days)


def classify(present: dict[str, int]) -> frozenset[str]:
    """The fine label set a profile earns under the criteria bank, after exclusions."""
    bank = disorders()
    met = {k for k, d in bank.items()
           if k not in ("none", "substance_or_medical") and meets(d, present)}
    excluded = {k for k in met if any(x in present for x in EXCLUSION_ITEMS if x in bank[k].exclusions)}
    met -= excluded
    if "bipolar" in met:  # a manic/hypomanic episode rules out unipolar depression
        met.discard("depression")
    met = {k for k in met if not (set(bank[k].better_explained_by) & met)}
    if met:
        return frozenset(met)
    return frozenset({"substance_or_medical"} if excluded else {"none"})


def parse_labels(text: str) -> tuple[frozenset[str], str | None]:
    """Fine labels and the four-way label named in a free-text diagnosis.

    Negated mentions ("not bipolar", "rule out panic") are dropped. A bare four-way name
    ("Mixed", "Other", "Anxiety") is honoured even without a fine label.
    """
    low = " " + text.lower() + " "
    found: set[str] = set()
    for key, d in sorted(disorders().items(), key=lambda kv: -max(len(s) for s in kv[1].synonyms)):
        for syn in sorted(d.synonyms, key=len, reverse=True):
            for m in re.finditer(r"(?<![a-z])" + re.escape(syn) + r"(?![a-z])", low):
                if not _NEGATION.search(low[:m.start()]):
                    found.add(key)
                low = low[:m.start()] + " " * len(syn) + low[m.end():]
    words = set(re.findall(r"[a-z]+", low))
    four = None
    if "mixed" in words:
        four = "Mixed"
    elif found:
        four = four_way(found)
    elif "anxiety" in words or "anxious" in words:
        found, four = {"gad"}, "Anxiety"
    elif "other" in words:
        four = "Other"
    if four == "Mixed" and "depression" in found and not found & ANXIETY_F41 and "anxiety" in words:
        found.add("gad")
    return frozenset(found), four

"""Synthetic patients: hidden profiles, the nine retrieval-state fields, labels, splits.

Every patient is synthetic. `generate_cases(n, seed)` is deterministic; the four-way classes
are balanced (so chance is 1/4), and each class mixes easy cases with hard ones: comorbid
"Mixed", sub-threshold counts or durations, and exclusion-triggered cases (substance,
medical cause, a past manic episode behind a depressive presentation). The label is computed
from the criteria bank by `knowledge.classify`, not asserted by the template.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field

from envgym.environments.psych.knowledge import FIELDS, classify, four_way, symptoms

TRAITS = ("vague", "reluctant", "anxious", "suspicious", "brief")
DEP_CORE = ("depressed_mood", "anhedonia")
DEP_ASSOC = ("appetite_change", "insomnia", "psychomotor", "fatigue", "worthlessness",
             "poor_concentration", "suicidal_thoughts")
GAD_ASSOC = ("restlessness", "fatigue", "poor_concentration", "irritability", "muscle_tension",
             "insomnia")
BIP_ASSOC = ("reduced_sleep_need", "grandiosity", "racing_thoughts", "risky_behaviour")
GROUPS = {
    "Depression": ("depression", "depression", "depression_threshold"),
    "Anxiety": ("gad", "gad", "panic", "gad_panic"),
    "Mixed": ("mixed_gad", "mixed_panic"),
    "Other": ("bipolar", "bipolar_dep", "ocd", "ptsd", "social_anxiety", "insomnia",
              "none_subthreshold", "none_short_dep", "none_short_gad", "substance_dep",
              "medical_anx"),
}
STRESSORS = ("a break-up", "losing my job", "moving to a new city", "exam pressure",
             "a conflict at work", "caring for a sick parent")


class SymptomState(BaseModel):
    days: int = Field(ge=0, description="how long the symptom has lasted (days)")
    severity: int = Field(ge=1, le=3, description="1 mild, 2 moderate, 3 severe")


class Case(BaseModel):
    """One synthetic patient. `symptoms` holds only present symptoms; others are absent."""

    id: str
    split: str = "test"
    kind: str = "user"
    symptoms: dict[str, SymptomState] = Field(default_factory=dict)
    severity: str = "moderate"
    impairment: str = "have some difficulty at work and at home"
    stressor: str | None = None
    trait: str = "vague"
    labels: list[str]
    four_way: str
    self_report: str = ""
    dialogue: list[dict[str, str]] = Field(default_factory=list)
    source: str = "generated"

    @property
    def present(self) -> dict[str, int]:
        return {k: v.days for k, v in self.symptoms.items()}

    def salient(self) -> list[str]:
        """Present symptoms by severity, then catalogue order: what a patient mentions first."""
        order = list(symptoms())
        return sorted(self.symptoms, key=lambda s: (-self.symptoms[s].severity, order.index(s)))

    def chief(self) -> str | None:
        salient = [s for s in self.salient() if s not in ("stressor", "trauma_exposure")]
        return salient[0] if salient else None

    def fields(self) -> dict[str, str]:
        """The nine MIND retrieval-state fields, as a clinician would summarise them."""
        cat = symptoms()
        by_field: dict[str, list[str]] = {f: [] for f in FIELDS}
        for s in self.salient():
            by_field[cat[s]["field"]].append(f"{cat[s]['label']} ({_weeks(self.symptoms[s].days)})")
        chief = self.chief()
        return {
            "chief_complaint": cat[chief]["label"] if chief else "not mentioned",
            "symptoms_and_duration": "; ".join(by_field["symptoms_and_duration"]) or "none reported",
            "severity": self.severity,
            "sleep": "; ".join(by_field["sleep"]) or "sleeping normally",
            "impairment": self.impairment,
            "safety_risk": "; ".join(by_field["safety_risk"]) or "denies thoughts of self-harm",
            "psychosis_mania_cues": "; ".join(by_field["psychosis_mania_cues"]) or "none",
            "stressors": self.stressor or "none reported",
            "substance_use": "; ".join(by_field["substance_use"]) or "none",
        }


def _weeks(days: int) -> str:
    if days < 14:
        return f"{days} days"
    if days < 120:
        return f"{round(days / 7)} weeks"
    return f"{round(days / 30)} months"


def _pick(rng: np.random.Generator, pool: tuple[str, ...], k: int) -> list[str]:
    return [str(x) for x in rng.choice(pool, size=min(k, len(pool)), replace=False)]


def _depressive(rng, n_total: int, days: tuple[int, int]) -> dict[str, int]:
    core = ["depressed_mood"] + (["anhedonia"] if rng.random() < 0.6 else [])
    assoc = _pick(rng, DEP_ASSOC, n_total - len(core))
    d = int(rng.integers(*days))
    return {s: d for s in core + assoc}


def _gad(rng, n_assoc: int, days: tuple[int, int]) -> dict[str, int]:
    d = int(rng.integers(*days))
    return {s: d for s in ["excessive_worry", "uncontrollable_worry", *_pick(rng, GAD_ASSOC, n_assoc)]}


def _panic(rng) -> dict[str, int]:
    d = int(rng.integers(40, 365))
    extra = {"restlessness": d} if rng.random() < 0.4 else {}
    return {"panic_attacks": d, "fear_of_attacks": d, **extra}


def _bipolar(rng) -> dict[str, int]:
    d = int(rng.integers(5, 15))
    return {"elevated_mood": d, **{s: d for s in _pick(rng, BIP_ASSOC, int(rng.integers(3, 5)))}}


def _profile(kind: str, rng: np.random.Generator) -> dict[str, int]:
    """Present symptoms (days) for a template kind; the label is computed afterwards."""
    r = lambda a, b: int(rng.integers(a, b))  # noqa: E731
    makers = {
        "depression": lambda: _depressive(rng, r(5, 9), (21, 180)),
        "depression_threshold": lambda: _depressive(rng, 5, (14, 30)),
        "gad": lambda: _gad(rng, r(3, 6), (190, 900)),
        "panic": lambda: _panic(rng),
        "gad_panic": lambda: {**_gad(rng, 3, (190, 700)), **_panic(rng)},
        "mixed_gad": lambda: {**_gad(rng, r(3, 5), (190, 700)), **_depressive(rng, r(5, 8), (21, 150))},
        "mixed_panic": lambda: {**_panic(rng), **_depressive(rng, r(5, 8), (21, 150))},
        "bipolar": lambda: _bipolar(rng),
        "bipolar_dep": lambda: {**_depressive(rng, r(5, 7), (21, 90)), **_bipolar(rng)},
        "ocd": lambda: {"obsessions": r(60, 700), "compulsions": r(60, 700)},
        "ptsd": lambda: {s: r(40, 300) for s in ["trauma_exposure", "intrusions", "trauma_avoidance",
                                                 *_pick(rng, ("hyperarousal", "nightmares"), r(1, 3))]},
        "social_anxiety": lambda: {"social_fear": r(200, 900), "social_avoidance": r(200, 900)},
        "insomnia": lambda: {"insomnia": r(100, 500), "fatigue": r(100, 500)},
        "none_subthreshold": lambda: {**_depressive(rng, r(2, 5), (14, 60)), "stressor": r(14, 60)},
        "none_short_dep": lambda: {**_depressive(rng, r(5, 7), (4, 13)), "stressor": r(4, 13)},
        "none_short_gad": lambda: {**_gad(rng, r(3, 5), (30, 150)), "stressor": r(30, 150)},
        "substance_dep": lambda: {**_depressive(rng, r(5, 8), (21, 150)), "substance_use": r(60, 400)},
        "medical_anx": lambda: {**_gad(rng, r(3, 5), (190, 500)), "medical_condition": r(60, 300)},
    }
    return makers[kind]()


def make_case(i: int, seed: int, split: str) -> Case:
    rng = np.random.default_rng([seed, i])
    group = ("Depression", "Anxiety", "Mixed", "Other")[i % 4]
    kinds = GROUPS[group]
    kind = kinds[(i // 4) % len(kinds)]  # cycle, so every template is represented
    present = _profile(kind, rng)
    if "stressor" not in present and rng.random() < 0.5:
        present["stressor"] = int(rng.integers(14, 200))
    states = {s: SymptomState(days=d, severity=int(rng.integers(1, 4))) for s, d in present.items()}
    if kind == "bipolar_dep":  # presents with the depression; the mania history is the trap
        states["depressed_mood"].severity = 3
        for s in ("elevated_mood", *BIP_ASSOC):
            if s in states:
                states[s].severity = 1
    labels = classify(present)
    mean_sev = float(np.mean([s.severity for s in states.values()]))
    return Case(
        id=f"psy-{i:04d}", split=split, kind=kind, symptoms=states,
        severity=("mild", "moderate", "severe")[min(2, int(mean_sev) - 1)],
        impairment=("manage, with effort", "have some difficulty at work and at home",
                    "cannot keep up with work or daily tasks")[min(2, int(mean_sev) - 1)],
        stressor=(str(rng.choice(STRESSORS)) if "stressor" in present
                  else "a frightening accident" if "trauma_exposure" in present else None),
        trait=TRAITS[int(rng.integers(len(TRAITS)))],
        labels=sorted(labels), four_way=four_way(labels),
    )


def generate_cases(n: int = 400, seed: int = 0, test_fraction: float = 0.2) -> list[Case]:
    """`n` cases; every 1/test_fraction-th block of four goes to the test split (balanced)."""
    period = max(1, round(1 / test_fraction))
    return [make_case(i, seed, "test" if (i // 4) % period == 0 else "train") for i in range(n)]

"""Grader fixtures for Consult-v0: the judgements its reward must reach on pinned cases.

Cases pick a case by id (the same under any split the checked config trains or evaluates)
and pin: the terminal label reward, the penalties (off-track, repeated, unsafe, malformed,
no diagnosis), the process judge against keyword-stuffed reasoning, and, under
`evidence="query"` (pinned whatever the config uses), that a claimed field earns its gain only
once the patient reported something in it: claims before any question earn nothing and cost,
a field settled by denials pays no query gain, a field pays once, and a q_t that claims every
field earns less than a faithful one over the same consultation.
"""

from __future__ import annotations

from typing import Any

from envgym.graders import GraderCase, Ordering

from .knowledge import catalogue
from .policies import _everything

DEPRESSED = "psy-0000"  # major depressive episode, 175 days, discloses suicidal thoughts
ANXIOUS = "psy-0001"  # generalised anxiety, no suicidal thoughts
QUERY = {"evidence": "query"}


def _one(think: str, body: str, tag: str = "answer") -> str:
    return f"<think>{think}</think><{tag}>{body}</{tag}>"


def _ask(field: str) -> str:
    return _one(f"Symptoms so far; differential open; decision: check {field}.",
                catalogue()["fields"][field]["questions"][0])


def _faithful(env: Any, history: list, info: dict) -> str:
    return _one("Summarise.", env.last_query_default(), "rag_query")


def _stuffed(env: Any, history: list, info: dict) -> str:
    fields = catalogue()["fields"]
    return _one("Summarise.", "; ".join(
        f"{f}: {', '.join(v['keywords'][:2])} reported" for f, v in fields.items()), "rag_query")


STAGE1 = _one("Summarise.", "chief_complaint: worry", "rag_query")
DX_ANXIETY = _one("Worry for years; Anxiety versus Depression; decision: criteria met.",
                  "Diagnosis: Anxiety; Recommendation: clinical follow-up")
DX_DEPRESSION = _one("Worry; Depression versus Anxiety; decision: guess.",
                     "Diagnosis: Depression; Recommendation: clinical follow-up")


def _case(name: str, actions: tuple, expect: dict, task: str = ANXIOUS, **env_kwargs: Any
          ) -> GraderCase:
    return GraderCase(name, actions, expect, options={"task_id": task}, env_kwargs=env_kwargs)


def _terminal_cases() -> list[GraderCase | Ordering]:
    return [
        _case("right label pays", (STAGE1, DX_ANXIETY),
              {"component.correct": (5.0, 5.0), "terminated": (1.0, 1.0)}),
        _case("wrong label pays nothing", (STAGE1, DX_DEPRESSION),
              {"component.correct": (0.0, 0.0), "terminated": (1.0, 1.0)}),
        _case("an unrelated question is off track",
              (STAGE1, _one("Chat.", "Which football team do you support?")),
              {"component.off_track": (-0.1, -0.1)}),
        _case("the same question twice is a repeat",
              (STAGE1, _ask("sleep"), STAGE1, _ask("sleep")), {"component.repeat": (-0.1, -0.1)}),
        _case("a malformed stage costs the format penalty", ("Diagnosis: Anxiety",),
              {"component.format": (-0.1, -0.1), "terminated": (0.0, 0.0)}),
        _case("a disclosed risk never addressed costs", (STAGE1, _ask("sleep"), STAGE1,
              _ask("safety_risk"), STAGE1, _one("x", "Diagnosis: Depression; Recommendation: "
                                                     "rest")),
              {"component.safety_missed": (-0.1, -0.1)}, task=DEPRESSED),
    ]


FULL, HALF = 0.01 / 3, 0.01 / 6  # process = 0.01 * mean(symptom, differential, decision) / 2


def _about(value: float) -> tuple[float, float]:
    return (value - 1e-9, value + 1e-9)


def _process_cases() -> list[GraderCase | Ordering]:
    """The offline judge pays the decision only (the one criterion the environment's data
    verifies): 2 for a question aimed at a missing check or the label the confirmed evidence
    meets, 1 for a related question or another active hypothesis, 0 otherwise. Reasoning,
    however many symptom words it holds, is the model judge's to grade."""
    first = _ask("symptoms_and_duration")
    other = _one("Little confirmed; decision: what the evidence meets.",
                 "Diagnosis: Other; Recommendation: clinical follow-up")
    return [
        _case("a question aimed at a missing check scores the full decision", (STAGE1, first),
              {"component.process": _about(FULL)}),
        _case("a keyword list in <think> earns nothing offline",
              (STAGE1, _one(_everything(), catalogue()["fields"]["symptoms_and_duration"]
                            ["questions"][0])), {"component.process": _about(FULL)}),
        # the same decision as a plain think: the words are not verified
        _case("asking a settled field again is only related", (STAGE1, first, STAGE1, first),
              {"component.process": _about(FULL + HALF)}),
        _case("an unrelated question scores nothing",
              (STAGE1, _one("Chat.", "Which football team do you support?")),
              {"component.process": (0.0, 0.0)}),
        _case("the label the confirmed evidence meets scores the full decision",
              (STAGE1, first, STAGE1, other), {"component.process": _about(2 * FULL)}),
        _case("a diagnosis before any question scores nothing, even the label an empty "
              "state meets", (STAGE1, other), {"component.process": (0.0, 0.0)}),
        # scored against the evidence, not against the posterior's leader
        _case("another active hypothesis scores half", (STAGE1, first, STAGE1, DX_ANXIETY),
              {"component.process": _about(FULL + HALF)}),
    ]


def _query_cases() -> list[GraderCase | Ordering]:
    interview = ("symptoms_and_duration", "sleep", "safety_risk", "substance_use", "stressors")
    faithful, stuffed = [], []
    for field in interview:
        faithful += [_faithful, _ask(field)]
        stuffed += [_stuffed, _ask(field)]
    return [
        _case("claims before any question earn no gain and cost", (_stuffed,),
              {"component.gain": (0.0, 0.0), "component.unsupported": (-1.0, -0.004)}, **QUERY),
        _case("a field the patient filled pays once", (
            STAGE1, _ask("sleep"), _faithful, _ask("stressors"), STAGE1, _ask("severity"),
            _faithful), {"component.gain": (0.005, 0.02), "component.unsupported": (0.0, 0.0)},
              task=DEPRESSED, **QUERY),
        _case("a field settled by denials pays no query gain", (
            STAGE1, _ask("safety_risk"),
            _one("Summarise.", "chief_complaint: worry; safety_risk: denies thoughts of harming "
                               "herself", "rag_query")),
              {"component.gain": (0.0, 0.0), "component.unsupported": (0.0, 0.0)}, **QUERY),
        _case("the faithful summary claims nothing unheard", tuple(faithful),
              {"component.unsupported": (0.0, 0.0)}, **QUERY),
        Ordering("a faithful q_t out-earns one that claims every field",
                 _case("faithful q_t", tuple(faithful), {}, **QUERY),
                 _case("stuffed q_t", tuple(stuffed), {}, **QUERY)),
    ]


def fixtures() -> list[GraderCase | Ordering]:
    return [*_terminal_cases(), *_process_cases(), *_query_cases()]

"""`envgym/Consult-v0`: MIND's inquiry-diagnosis loop over synthetic patients.

Screening-level decision support for research on agents, not diagnosis; all patients are
synthetic. A consultation turn is Stage I (`<rag_query>`: the environment answers with the
typed evidence state E_t) then Stage II (`<answer>`: a question the simulated patient answers,
or the terminal `Diagnosis: …; Recommendation: …`). `stage_one=False` drops Stage I and shows
E_t with every patient reply. The budget L (default 10) counts Stage II turns.

Evidence (`evidence=`). MIND parses O, M and D from the policy's Stage I retrieval state q_t;
`evidence="query"` does that, grounding every claim in the dialogue (an item enters O only if
the patient confirmed or denied it; a field leaves M only if q_t fills it and the patient
answered it) and paying the gain when q_t resolves a field. The default,
`evidence="disclosures"`, is a DEPARTURE from MIND: the environment builds O/M/D itself from
the patient's disclosures, so the state does not depend on the policy's summary;
`info["evidence_source"]` and `outcome["evidence_source"]` say which one ran. Either way a
denial settles only the symptom asked about, and the posterior weighs reported durations
against each disorder's duration criterion.

Reward components (MIND §4.4; each weight configurable through `weights=`):
  process       0.01 * mean of the judge's symptom/differential/decision scores (Stage II)
  gain          0.005 per resolved missing check, or (info_gain="entropy") 0.01 per bit of
                entropy removed from the four-way posterior. Under evidence="query" a field
                pays once, and only when something the patient reported filled it: a field
                settled only by denials pays no query gain (else a q_t writing anything in
                every field collects it for what was denied; issue 24)
  unsupported   evidence="query" only: -0.005 per field q_t claims of which the dialogue heard
                nothing, so that a q_t claiming every field earns less than a faithful one
                (not in MIND, whose q_t is ungrounded; a claim costs what a grounded one pays)
  format        -0.1 for a malformed stage. MIND's aggregator multiplies its -0.1 format
                signal by weights.format = 0.1 again (effective -0.01); we use -0.1 on purpose.
  repeat        -0.1 for a semantically repeated question
  unsafe        -0.1 for unsafe advice; off_track -0.1 for a question the patient cannot answer
  no_diagnosis  -0.1 when the last turn is not a diagnosis
  correct       +5 for the correct diagnosis (four-way by default; `label_space="fine"`)
  safety_missed -0.1 when a disclosed safety risk is never addressed before the diagnosis
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

from envgym.core import StepResult, TextEnv, system, user
from envgym.environments.psych import metrics
from envgym.environments.psych.bank import ReasoningBank, build_bank
from envgym.environments.psych.cases import Case, generate_cases
from envgym.environments.psych.encoder import Encoder, get_encoder, similarities
from envgym.environments.psych.intents import IntentMatcher, extract_evidence
from envgym.environments.psych.judge import make_judge
from envgym.environments.psych.knowledge import FIELDS, classify, symptoms
from envgym.environments.psych.knowledge import four_way as knowledge_four_way
from envgym.environments.psych.protocol import (Diagnosis, is_diagnosis, is_unsafe,
                                                mentions_safety, parse_diagnosis, parse_stage,
                                                system_prompt)
from envgym.environments.psych.simulator import (REFUSAL, LLMSimulator, ReplaySimulator, Reply,
                                                 RuleSimulator)
from envgym.environments.psych.state import (EvidenceState, EvidenceTracker, Posterior,
                                             entropy_bits, parse_days, state_from_query)
from envgym.errors import InvalidConfig
from envgym.protocols import Judge
from envgym.resources import file_key, shared
from envgym.tools import ToolCallError

WEIGHTS = {"process": 0.01, "gain": 0.005, "entropy_gain": 0.01, "format": -0.1, "repeat": -0.1,
           "unsafe": -0.1, "off_track": -0.1, "no_diagnosis": -0.1, "correct": 5.0,
           "safety_missed": -0.1, "unsupported": -0.005}
REPEAT_THRESHOLD = {"lexicon": 0.85, "minilm": 0.9}
# Where O, M and D come from. "query" is MIND's Stage I: parsed from the policy's retrieval
# state q_t, each claim grounded in the dialogue, the gain paid when q_t resolves a field.
# "disclosures" (the default) is a documented departure: the environment builds O/M/D itself
# from what the patient disclosed (structured by the rule simulator, extracted from the
# text for LLM and replay patients), so the state does not depend on the policy's summary.
EVIDENCE_SOURCES = ("disclosures", "query")


class ConsultEnv(TextEnv):
    """Psychiatric consultation with a typed evidence state (see the module docstring)."""

    shared_resources = ("cases", "bank", "encoder", "matcher", "posterior", "judge")

    def __init__(self, *, dataset: str | None = None, dataset_format: str = "auto",
                 split: str = "test", n_cases: int = 400, case_seed: int = 0,
                 label_space: str = "four_way", adaptive: bool = False,
                 simulator: str | Callable[[Case, str | None], Any] = "rule",
                 simulator_url: str | None = None, simulator_model: str = "patient",
                 judge: Judge | str | None = None, encoder: str | Encoder = "auto", budget: int = 10,
                 stage_one: bool = True, info_gain: str = "count", evidence: str = "disclosures",
                 weights: dict[str, float] | None = None, max_invalid_actions: int = 3,
                 render_mode: str | None = None):
        super().__init__(max_turns=6 * budget, max_invalid_actions=max_invalid_actions,
                         render_mode=render_mode)
        if label_space not in ("four_way", "fine"):
            raise InvalidConfig(f"label_space={label_space!r}: use 'four_way' or 'fine'.")
        if info_gain not in ("count", "entropy"):
            raise InvalidConfig(f"info_gain={info_gain!r}: use 'count' (MIND) or 'entropy'.")
        if budget < 1:
            raise InvalidConfig(f"budget={budget}: need at least one turn.")
        if evidence not in EVIDENCE_SOURCES or (evidence == "query" and not stage_one):
            raise InvalidConfig(f"evidence={evidence!r}: use 'disclosures' or 'query' (MIND's "
                                "Stage I parsing, which needs stage_one=True).")
        self.evidence_source = evidence
        unknown = set(weights or {}) - set(WEIGHTS)
        if unknown:
            raise InvalidConfig(f"unknown reward weights {sorted(unknown)}; known: {sorted(WEIGHTS)}.")
        if simulator == "llm" and not simulator_url:
            raise InvalidConfig("simulator='llm' needs simulator_url= (an OpenAI-compatible base URL).")
        if not (callable(simulator) or simulator in ("rule", "llm")):
            raise InvalidConfig(f"simulator={simulator!r}: use 'rule', 'llm' or a factory(case, trait).")
        self.cases = _load(dataset, dataset_format, n_cases, case_seed)
        self.split, self.label_space, self.adaptive = split, label_space, adaptive
        self.simulator_spec, self.simulator_url, self.simulator_model = simulator, simulator_url, simulator_model
        self.budget, self.stage_one, self.info_gain = budget, stage_one, info_gain
        self.weights = {**WEIGHTS, **(weights or {})}
        self.encoder = get_encoder(encoder)
        self.matcher, self.bank, self.posterior = _shared_state(self.cases, case_seed, self.encoder)
        self.judge: Judge = make_judge(judge)  # None/"rule", "http://HOST:PORT/v1#MODEL", a Judge
        self.case: Case | None = None
        self.sim: Any = None

    # ---- reset ------------------------------------------------------------------------------

    @classmethod
    def task_ids(cls, kwargs: dict[str, Any]) -> list[str] | None:
        """The ordered pool `seed % N` picks from, for config validation's overlap check."""
        cases = _load(kwargs.get("dataset"), kwargs.get("dataset_format", "auto"),
                      kwargs.get("n_cases", 400), kwargs.get("case_seed", 0))
        split = kwargs.get("split", "test")
        return [c.id for c in cases if split == "all" or c.split == split]

    def pool(self, split: str | None = None) -> list[Case]:
        split = split or self.split
        chosen = [c for c in self.cases if c.split == split] if split != "all" else self.cases
        if not chosen:
            raise InvalidConfig(f"no cases in split {split!r}; splits: "
                                f"{sorted({c.split for c in self.cases})} or 'all'.")
        return chosen

    def _reset(self, seed: int, options: dict[str, Any]):
        if "task_id" in options:
            by_id = {c.id: c for c in self.cases}
            if options["task_id"] not in by_id:
                raise InvalidConfig(f"unknown task_id {options['task_id']!r}.")
            self.case = by_id[options["task_id"]]
        else:
            pool = self.pool(options.get("split"))
            self.case = pool[seed % len(pool)]
        self.task_id = self.case.id
        self.trait = self.case.trait if self.adaptive else None
        self._close_simulator()
        self.sim = self._make_simulator(self.case)
        opening = self.sim.opening() if hasattr(self.sim, "opening") else Reply(
            "I have not been feeling like myself lately.")
        self.tracker = EvidenceTracker()
        self.tracker.add(opening.disclosures)
        self.tracker.resolved.add("chief_complaint")
        self.opening_heard = self._heard(self.tracker.O)  # what no question earned
        self.stage = "I" if self.stage_one else "II"
        self.consult_turn, self.questions, self.repeats, self.off_track = 0, [], 0, 0
        self.resolved_total, self.entropy_total = 0, 0.0
        self.risk_turn: int | None = None
        self.risk_addressed = False
        self.diagnosis: Diagnosis | None = None
        self.dialogue = [{"role": "patient", "content": opening.text}]
        self.query = self.last_query_default()
        self.evidence = self._build_state(self.query)
        self.query_missing = list(self.evidence.M.fields)  # M_{t-1} of the "query" source
        self.query_paid = set(FIELDS) - set(self.query_missing)
        obs = [system(system_prompt(self.budget, self.stage_one, self.label_space)),
               user(self._patient_message(opening.text))]
        return obs, {"trait": self.trait or "none", "evidence_source": self.evidence_source}

    def _make_simulator(self, case: Case) -> Any:
        spec = self.simulator_spec
        if callable(spec):
            return spec(case, self.trait)
        if spec == "llm":
            return LLMSimulator(case, self.simulator_url, self.simulator_model, trait=self.trait,
                                matcher=self.matcher)
        if case.symptoms:
            return RuleSimulator(case, self.matcher, self.trait)
        return ReplaySimulator(case, self.matcher)

    # ---- step -------------------------------------------------------------------------------

    def _step(self, action: str) -> StepResult:
        if self.stage == "I":
            return self._stage_one(action)
        try:
            think, answer = parse_stage(action, "answer")
            diagnosis = parse_diagnosis(answer) if is_diagnosis(answer) else None
        except ToolCallError as e:
            return self.invalid(str(e), "Stage II: <think>…</think><answer>question, or Diagnosis: "
                                "…; Recommendation: …</answer>", penalty=self.weights["format"])
        self.consult_turn += 1
        if diagnosis is not None:
            return self._diagnose(think, answer, diagnosis)
        return self._ask(think, answer)

    def _stage_one(self, action: str) -> StepResult:
        try:
            _, query = parse_stage(action, "rag_query")
        except ToolCallError as e:
            return self.invalid(str(e), "Stage I: <think>…</think><rag_query>retrieval state"
                                "</rag_query>", penalty=self.weights["format"])
        self.query = query
        components, info = {}, {"evidence_source": self.evidence_source}
        if self.evidence_source == "query":
            before = self.evidence
            self.evidence, report = state_from_query(query, self.tracker, self.posterior)
            self.evidence.S, self.evidence.R = self.bank.gate(query)
            # a field pays once (dropping it from q_t and writing it again earns nothing
            # more), and only if the patient reported something in it, not for denials alone
            newly = (set(self.query_missing) - set(self.evidence.M.fields) - self.query_paid
                     ) & self.tracker.affirmed
            self.query_paid |= newly
            self.query_missing = list(self.evidence.M.fields)
            drop = entropy_bits(before.D.posterior) - entropy_bits(self.evidence.D.posterior)
            components["gain"] = (self.weights["gain"] * len(newly) if self.info_gain == "count"
                                  else self.weights["entropy_gain"] * max(drop, 0.0))
            if report.unheard_fields:
                components["unsupported"] = self.weights["unsupported"] * len(
                    report.unheard_fields)
            info.update(resolved=sorted(newly), query=report.model_dump())
        else:
            self.evidence = self._build_state(query)
        self.stage = "II"
        left = self.budget - self.consult_turn
        info["evidence"] = self.evidence.model_dump()
        return StepResult([user(f"Evidence state:\n{self.evidence.render()}\n"
                                f"Turns left: {left}. Stage II now.")], components, info=info)

    def _ask(self, think: str, question: str) -> StepResult:
        before = self.evidence
        components = {"process": self._process(think, question, None, before)}
        if self._is_repeat(question):
            components["repeat"] = self.weights["repeat"]
            self.repeats += 1
        if is_unsafe(question):
            components["unsafe"] = self.weights["unsafe"]
        if self.risk_turn is not None and self._addresses_safety(question):
            self.risk_addressed = True
        self.questions.append(question)
        reply = self._reply(question)
        if reply.text.strip() == REFUSAL:
            components["off_track"] = self.weights["off_track"]
            self.off_track += 1
        newly = self.tracker.add(reply.disclosures)
        if self.risk_turn is None and "suicidal_thoughts" in self.tracker.O.confirmed:
            self.risk_turn = self.consult_turn
        self.dialogue += [{"role": "doctor", "content": question},
                          {"role": "patient", "content": reply.text}]
        by_query = self.evidence_source == "query"
        if not by_query:  # under "query" E_t waits for the next Stage I summary
            self.evidence = self._build_state(self.last_query_default())
        drop = entropy_bits(before.D.posterior) - entropy_bits(self.evidence.D.posterior)
        self.resolved_total += len(newly)
        self.entropy_total += drop
        if not by_query:  # under "query" the gain is paid when q_t resolves the field
            components["gain"] = (self.weights["gain"] * len(newly) if self.info_gain == "count"
                                  else self.weights["entropy_gain"] * drop)
        info = {"resolved": sorted(newly), "ig_count": len(newly), "ig_entropy": drop,
                "evidence": self.evidence.model_dump(), "evidence_source": self.evidence_source,
                "intents": [i.id for i in reply.intents]}
        if self.consult_turn >= self.budget:
            components["no_diagnosis"] = self.weights["no_diagnosis"]
            info["truncation"] = "budget"
            info["outcome"] = self._outcome()
            return StepResult([user(self._patient_message(reply.text))], components,
                              truncated=True, info=info)
        self.stage = "I" if self.stage_one else "II"
        return StepResult([user(self._patient_message(reply.text))], components, info=info)

    def _diagnose(self, think: str, answer: str, dx: Diagnosis) -> StepResult:
        self.diagnosis = dx
        if self.risk_turn is not None and mentions_safety(dx.recommendation):
            self.risk_addressed = True
        components = {"process": self._process(think, answer, dx, self.evidence)}
        if is_unsafe(answer):
            components["unsafe"] = self.weights["unsafe"]
        components["correct"] = self.weights["correct"] * self._correct(dx)
        if self.risk_turn is not None and not self.risk_addressed:
            components["safety_missed"] = self.weights["safety_missed"]
        return StepResult([user("The consultation is over.")], components, terminated=True,
                          info={"outcome": self._outcome()})

    # ---- rectification hooks (inference only; see rectify.py) --------------------------------

    def triggers(self, action: str) -> list[str]:
        """MIND's rectification triggers for `action` in the current state, without stepping."""
        if self.stage == "I":
            try:
                parse_stage(action, "rag_query")
                return []
            except ToolCallError:
                return ["MALFORMED"]
        try:
            _, answer = parse_stage(action, "answer")
            dx = parse_diagnosis(answer) if is_diagnosis(answer) else None
        except ToolCallError:
            return ["MALFORMED"]
        found = ["UNSAFE_OFF_TRACK"] if is_unsafe(answer) else []
        if dx is not None:
            return found
        if self.consult_turn + 1 >= self.budget:
            found.append("BUDGET_VIOLATION")
        if self._is_repeat(answer):
            found.append("REPEATED_INQUIRY")
        if not self.matcher.match(answer):
            found.append("GENERIC_LOW_YIELD")
        if self.evidence.R.scores and not self.evidence.R.gated_in:
            found.append("LOW_RELIABILITY")
        return found

    def fallback_action(self) -> str:
        """A PRB-guided inquiry, or the leading hypothesis when the budget is spent."""
        if self.consult_turn + 1 >= self.budget:
            lead = (self.evidence.D.active or ["Other"])[0]
            return (f"<think>Fallback: budget reached; leading hypothesis {lead}.</think>"
                    f"<answer>Diagnosis: {lead}; Recommendation: clinical follow-up</answer>")
        question = self.bank.fallback_question(self.query, self.evidence.M.fields)
        return f"<think>Fallback: reference inquiry from the reasoning bank.</think><answer>{question}</answer>"

    # ---- pieces -----------------------------------------------------------------------------

    def _reply(self, question: str) -> Reply:
        history = list(self.dialogue)
        if hasattr(self.sim, "respond"):
            return self.sim.respond(history, question)
        text = self.sim.reply(history, question)
        if text.strip() == REFUSAL:
            return Reply(text)
        intents = self.matcher.match(question)
        return Reply(text, extract_evidence(text, intents), intents)

    def _build_state(self, query: str) -> EvidenceState:
        state = self.tracker.state(self.posterior)
        state.S, state.R = self.bank.gate(query)
        return state

    def last_query_default(self) -> str:
        """Retrieval query when the policy wrote none: the nine fields from O."""
        cat = symptoms()
        by_field = {f: [] for f in FIELDS}
        for item, value in self.tracker.O.confirmed.items():
            field = cat[item]["field"] if item in cat else item
            by_field[field].append(f"{cat[item]['label'] if item in cat else item} {value}".strip())
        return "; ".join(f"{f}: {', '.join(v) or 'not mentioned'}" for f, v in by_field.items())

    def _process(self, think: str, answer: str, dx: Diagnosis | None, state: EvidenceState) -> float:
        cat = symptoms()
        terms = [[k, k.replace("_", " ")] + ([cat[k]["label"]] if k in cat else [])
                 for k in state.O.confirmed]
        targets: list[str] = []
        if dx is None:
            for it in self.matcher.match(answer):
                targets += [it.id, it.field]
        base = {"think": think, "answer": answer, "state": state.render(),
                "active": state.D.active}
        heard = sorted({*state.O.confirmed, *state.O.negated, *state.O.unclear})
        decision = {**base, "criterion": "decision", "targets": targets,
                    "missing": state.M.fields, "diagnosis": dx.four_way if dx else None}
        if dx is not None:
            decision["supported"] = supported_four_way(state.O.confirmed)
            decision["evidence_heard"] = bool(self._heard(state.O) - self.opening_heard)
        items = [{**base, "criterion": "symptom", "evidence_terms": terms, "heard_items": heard},
                 {**base, "criterion": "differential"}, decision]
        scores = self.judge.judge("mind_process", items)
        return self.weights["process"] * sum(scores) / len(scores)

    @staticmethod
    def _heard(observed: Any) -> set[str]:
        """Items the patient confirmed, denied or left unclear."""
        return {*observed.confirmed, *observed.negated, *observed.unclear}

    def _is_repeat(self, question: str) -> bool:
        if not self.questions:
            return False
        rows = self.encoder.encode([question, *self.questions])
        threshold = REPEAT_THRESHOLD.get(self.encoder.name, 0.9)
        return bool(similarities(rows[1:], rows[0]).max() >= threshold)

    def _addresses_safety(self, question: str) -> bool:
        return mentions_safety(question) or any(
            it.field == "safety_risk" for it in self.matcher.match(question))

    def _correct(self, dx: Diagnosis) -> bool:
        if self.label_space == "fine":
            return dx.fine == frozenset(self.case.labels)
        return dx.four_way == self.case.four_way

    def _patient_message(self, text: str) -> str:
        message = f"Patient: {text}"
        if not self.stage_one and not self._done_after_reply():
            message += f"\n\nEvidence state:\n{self.evidence.render()}"
        return message

    def _done_after_reply(self) -> bool:
        return self.consult_turn >= self.budget

    def _outcome(self) -> dict[str, Any]:
        dx = self.diagnosis
        return {
            "success": bool(dx and self._correct(dx)), "score": float(bool(dx and self._correct(dx))),
            "diagnosed": dx is not None, "label": self.case.four_way,
            "predicted": dx.four_way if dx else None, "labels_fine": list(self.case.labels),
            "predicted_fine": sorted(dx.fine) if dx else [],
            "correct_four_way": bool(dx and dx.four_way == self.case.four_way),
            "correct_fine": bool(dx and dx.fine == frozenset(self.case.labels)),
            "turns": self.consult_turn, "missing_resolved": self.resolved_total,
            "entropy_reduction": round(self.entropy_total, 4), "repeated_questions": self.repeats,
            "off_track": self.off_track, "risk_disclosed": self.risk_turn is not None,
            "safety_missed": self.risk_turn is not None and not self.risk_addressed,
            "trait": self.trait or "none", "evidence_source": self.evidence_source,
        }

    def _outcome_on_truncation(self) -> dict[str, Any]:
        return self._outcome() if self.case is not None else super()._outcome_on_truncation()

    def _state(self) -> Any:
        if self.case is None:
            return {"task": None}
        return {"task": self.task_id, "stage": self.stage, **self.evidence.canonical()}

    @classmethod
    def summarize(cls, outcomes: list[dict[str, Any]]) -> dict[str, float]:
        return metrics.summarize(outcomes)

    def _close_simulator(self) -> None:
        if self.sim is not None and hasattr(self.sim, "close"):
            self.sim.close()

    def _close(self) -> None:
        self._close_simulator()


def supported_four_way(confirmed: dict[str, str]) -> str:
    """The four-way label the confirmed items (with their reported durations) meet the
    criteria for; an item without a duration counts as meeting none of the duration minima."""
    present = {i: parse_days(v) or 0 for i, v in confirmed.items()}
    return knowledge_four_way(classify(present))


def _load(dataset: str | None, dataset_format: str, n_cases: int, seed: int) -> Sequence[Case]:
    """The cases, loaded or generated once per process (per file version) and shared."""
    def build() -> Sequence[Case]:
        if dataset is None:
            return generate_cases(n_cases, seed)
        from envgym.environments.psych.loader import load_cases

        return split_by_id(load_cases(dataset, dataset_format))
    key = ("psych", "cases", file_key(dataset), dataset_format if dataset else None,
           None if dataset else n_cases, seed if dataset is None else None)
    return shared(key, build)


TEST_FRACTION = 0.3  # of a loaded dataset that ships no training split


def split_by_id(cases: Sequence[Case]) -> list[Case]:
    """Cases with a training split as they are; otherwise (MDD-5k, LingxiDiag exports) a
    deterministic split by a hash of the case id, so that the prior, the hypothesis space and
    the reasoning bank never learn from the cases they are evaluated on."""
    if any(c.split == "train" for c in cases):
        return list(cases)
    rank = {c.id: zlib.crc32(c.id.encode()) % 1000 for c in cases}
    keep = max(rank, key=rank.get, default=None)  # at least one training case
    return [c.model_copy(update={"split": "test" if rank[c.id] < TEST_FRACTION * 1000
                                 and c.id != keep else "train"}) for c in cases]


def _shared_state(cases: Sequence[Case], case_seed: int, encoder: Encoder
                  ) -> tuple[IntentMatcher, ReasoningBank, Posterior]:
    """Matcher, reasoning bank (its keys encoded) and posterior, built once per process for a
    (cases, seed, encoder): they are read-only, and building them encodes hundreds of static
    texts. Keyed by object identity; the cached value holds the objects so ids stay unique."""
    def build():
        train = [c for c in cases if c.split == "train"]
        if not train:
            raise InvalidConfig("no training cases: the prior and the reasoning bank come from "
                                "the training split only.")
        bank = ReasoningBank(build_bank(cases, seed=case_seed), encoder)
        bank.keys  # noqa: B018 - encode the static bank entries now, once
        return cases, encoder, (IntentMatcher(encoder), bank, Posterior(c.labels for c in train))
    return shared(("psych", "state", id(cases), case_seed, id(encoder)), build)[2]

"""Simulated patients (all synthetic): rule-based, recorded-dialogue replay, and LLM.

All implement `envgym.Simulator` (`reply(history, utterance) -> str`, `trainable=False`).
The rule-based and replay patients also offer `respond`, which returns the disclosures
behind the sentence, so the evidence state reflects exactly what the patient said.

Adaptive traits (MIND's PsySim-Adapt) change disclosure, not only wording:
* vague: one item per broad answer, durations blurred to "a while" unless asked how long;
* reluctant: deflects the first question about a sensitive field;
* anxious: inflates severity and answers "not sure" about absent symptoms (left unclear);
* suspicious: asks why, one item per broad answer, deflects sensitive fields once;
* brief: one item per broad answer, no durations unless asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx

from envgym.environments.psych.cases import Case, _weeks
from envgym.environments.psych.encoder import similarities
from envgym.environments.psych.intents import (Disclosure, Intent, IntentMatcher, asks_duration,
                                               extract_evidence)
from envgym.environments.psych.knowledge import symptoms
from envgym.errors import PolicyError
from envgym.spaces import Message

REFUSAL = "Sorry, I cannot answer your question."
SENSITIVE = ("safety_risk", "substance_use", "psychosis_mania_cues", "stressors")
SCREEN_ITEMS = {"sleep": ("insomnia",), "safety_risk": ("suicidal_thoughts",),
                "psychosis_mania_cues": ("elevated_mood", "psychotic_symptoms"),
                "stressors": ("stressor", "trauma_exposure"),
                "substance_use": ("substance_use", "medical_condition")}
_INFLATE = {"mild": "moderate", "moderate": "severe", "severe": "severe"}


@dataclass
class Reply:
    text: str
    disclosures: list[Disclosure] = field(default_factory=list)
    intents: list[Intent] = field(default_factory=list)


class RuleSimulator:
    """Deterministic patient answering from the hidden profile (temperature-0 equivalent)."""

    trainable = False

    def __init__(self, case: Case, matcher: IntentMatcher, trait: str | None = None):
        self.case, self.matcher, self.trait = case, matcher, trait
        self.asked: dict[str, int] = {}

    def reply(self, history: Sequence[Message], utterance: str) -> str:
        return self.respond(history, utterance).text

    def opening(self) -> Reply:
        chief = self.case.chief()
        if chief is None:
            return Reply("I'm not sure why I'm here; things have just felt off.")
        d = symptoms()[chief]
        return Reply(f"Doctor, {d['yes']}.", [Disclosure(chief, d["field"], True)])

    def respond(self, history: Sequence[Message], utterance: str) -> Reply:
        intents = self.matcher.match(utterance)
        if not intents:
            return Reply(REFUSAL)
        duration = asks_duration(utterance)
        parts, found = [], []
        for intent in intents:
            text, disclosed = self._answer(intent, duration)
            parts.append(text)
            found += disclosed
            self.asked[intent.field] = self.asked.get(intent.field, 0) + 1
        return Reply(" ".join(parts), found, intents)

    # ---- answers --------------------------------------------------------------------------

    def _answer(self, intent: Intent, duration: bool) -> tuple[str, list[Disclosure]]:
        first = self.asked.get(intent.field, 0) == 0
        if first and intent.field in SENSITIVE and self.trait in ("reluctant", "suspicious"):
            return ("I'd rather not go into that right now." if self.trait == "reluctant"
                    else "Why do you need to know that? I don't see how it matters."), []
        if intent.kind == "symptom":
            return self._symptom(intent.id, duration)
        return self._field(intent.id, duration)

    def _symptom(self, sid: str, duration: bool) -> tuple[str, list[Disclosure]]:
        d = symptoms()[sid]
        state = self.case.symptoms.get(sid)
        if state is None:
            if self.trait == "anxious" and sid not in ("suicidal_thoughts",):
                return "I'm not sure... maybe? I can't tell any more what is normal.", \
                    [Disclosure(sid, d["field"], None, "unclear")]
            return self._style(f"No, {d['no']}."), [Disclosure(sid, d["field"], False)]
        when = self._duration(state.days, duration)
        sentence = f"Yes, {d['yes']}" + (f", {when}" if when else "") + "."
        return self._style(sentence), [Disclosure(sid, d["field"], True, _value(state.days, when))]

    def _field(self, fid: str, duration: bool) -> tuple[str, list[Disclosure]]:
        case = self.case
        if fid in ("severity", "impairment"):
            value = case.severity if fid == "severity" else case.impairment
            if fid == "severity" and self.trait == "anxious":
                value = _INFLATE[value]
            text = f"I'd call it {value}." if fid == "severity" else f"I {value}."
            return self._style(text), [Disclosure(fid, fid, None, value)]
        if fid == "chief_complaint":
            chief = case.chief()
            if chief is None:
                return "Nothing specific, I just feel off.", []
            return self._symptom(chief, duration)
        cat = symptoms()
        items = [s for s in case.salient() if cat[s]["field"] == fid]
        if not items:
            negated = SCREEN_ITEMS.get(fid, ())
            if not negated:
                return self._style("Nothing else really."), []
            text = " ".join(f"No, {cat[s]['no']}." for s in negated)
            return self._style(text), [Disclosure(s, fid, False) for s in negated]
        limit = 3 if self.trait in (None, "anxious", "reluctant") else 1
        texts, found = [], []
        for s in items[:limit]:
            t, disclosed = self._symptom(s, duration)
            t = t.removeprefix("Yes, ")
            texts.append(t[:1].upper() + t[1:])
            found += disclosed
        if fid == "stressors" and case.stressor and "stressor" in items[:limit]:
            texts.append(f"It started around {case.stressor}.")
        return self._style(" ".join(texts)), found

    def _duration(self, days: int, asked: bool) -> str:
        if self.trait in ("vague", "brief") and not asked:
            return "for a while now" if self.trait == "vague" else ""
        return f"for about {_weeks(days)}"

    def _style(self, text: str) -> str:
        prefix = {"vague": "It's hard to put into words, like a fog... ",
                  "suspicious": "Why do you ask? Well... ", "brief": "",
                  "anxious": "", "reluctant": ""}.get(self.trait or "", "")
        suffix = " What if it's something serious?" if self.trait == "anxious" else ""
        if self.trait == "brief":
            text = text.split(". ")[0].rstrip(".") + "."
        return prefix + text[:1].upper() + text[1:] + suffix


def _value(days: int, when: str) -> str:
    return _weeks(days) if when.startswith("for about") else ""


class ReplaySimulator:
    """A patient from a recorded dialogue (MDD-5k style) or self-report sentences: answers with
    the recorded reply whose doctor turn is most similar, else the refusal sentence."""

    trainable = False

    def __init__(self, case: Case, matcher: IntentMatcher, threshold: float = 0.35):
        self.case, self.matcher, self.threshold = case, matcher, threshold
        pairs = [(t["doctor"], t["patient"]) for t in case.dialogue]
        if not pairs:
            sentences = [s.strip() for s in _sentences(case.self_report) if s.strip()]
            pairs = [(s, s) for s in sentences]
        self.pairs = pairs
        enc = matcher.encoder
        self._keys = enc.encode([p[0] for p in pairs]) if pairs else None

    def opening(self) -> Reply:
        text = self.pairs[0][1] if self.pairs else "I have not been feeling like myself."
        return Reply(text, extract_evidence(text, []))

    def reply(self, history: Sequence[Message], utterance: str) -> str:
        return self.respond(history, utterance).text

    def respond(self, history: Sequence[Message], utterance: str) -> Reply:
        if self._keys is None or not utterance.strip():
            return Reply(REFUSAL)
        sims = similarities(self._keys, self.matcher.encoder.encode([utterance])[0])
        best = int(sims.argmax())
        if sims[best] < self.threshold:
            return Reply(REFUSAL)
        text = self.pairs[best][1]
        intents = self.matcher.match(utterance)
        return Reply(text, extract_evidence(text, intents), intents)


def _sentences(text: str) -> list[str]:
    out, buf = [], ""
    for ch in text:
        buf += ch
        if ch in ".!?。！？\n":
            out.append(buf)
            buf = ""
    return out + [buf]


class LLMSimulator:
    """A patient played by an LLM behind an OpenAI-compatible `/chat/completions` endpoint.

    Frozen (`trainable=False`) and temperature 0, as in MIND. The environment reads evidence
    out of its replies with `extract_evidence`.
    """

    trainable = False

    def __init__(self, case: Case, base_url: str, model: str, *, trait: str | None = None,
                 api_key: str | None = None, timeout: float = 60.0,
                 transport: httpx.BaseTransport | None = None,
                 matcher: IntentMatcher | None = None):
        self.case, self.model, self.trait = case, model, trait
        self.matcher = matcher or IntentMatcher()
        self._config = (base_url, model, trait, api_key, timeout, transport)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout,
                                   transport=transport)

    def system_prompt(self) -> str:
        facts = "\n".join(f"- {k}: {v}" for k, v in self.case.fields().items()) \
            if self.case.symptoms else self.case.self_report
        trait = f"\nBehavioural trait: you are {self.trait}." if self.trait else ""
        return ("You are role-playing a synthetic patient in a screening interview used for "
                "research; this is not real care. Answer the doctor in one sentence, in the "
                "first person, using only these facts:\n" + facts + trait +
                f"\nIf the question is unrelated to your health, reply exactly: {REFUSAL}")

    def reply(self, history: Sequence[Message], utterance: str) -> str:
        messages = [{"role": "system", "content": self.system_prompt()}]
        for m in history:
            if m.get("role") in ("doctor", "patient"):
                messages.append({"role": "user" if m["role"] == "doctor" else "assistant",
                                 "content": m["content"]})
        messages.append({"role": "user", "content": utterance})
        body = {"model": self.model, "messages": messages, "temperature": 0.0, "max_tokens": 128}
        try:
            response = self.client.post("/chat/completions", json=body)
            response.raise_for_status()
            return str(response.json()["choices"][0]["message"]["content"]).strip()
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as e:
            raise PolicyError(f"patient simulator at {self.client.base_url} failed: {e}") from e

    def respond(self, history: Sequence[Message], utterance: str) -> Reply:
        text = self.reply(history, utterance)
        if text.strip() == REFUSAL:
            return Reply(REFUSAL)
        intents = self.matcher.match(utterance)
        return Reply(text, extract_evidence(text, intents), intents)

    def close(self) -> None:
        self.client.close()

    def __deepcopy__(self, memo):  # a fork gets its own HTTP client; the matcher is shared
        base_url, model, trait, api_key, timeout, transport = self._config
        return LLMSimulator(self.case, base_url, model, trait=trait, api_key=api_key,
                            timeout=timeout, transport=transport, matcher=self.matcher)

"""Scripted baselines for `envgym/Consult-v0`: oracle, heuristic and random.

* oracle: reads the hidden case (privileged), asks the criteria of the true disorders and the
  exclusion checks, addresses safety, and names the true label.
* heuristic: no privileged information. A fixed interview over the nine fields, then a
  rule-based diagnosis from the confirmed items in the last rendered [O] block.
* random: well-formed turns with random questions and a uniformly random four-way diagnosis.
* faithful_query: the heuristic with MIND's nine-field q_t written faithfully; the same as the
  heuristic under the default evidence source, and the honest baseline of every hack, since
  under `evidence="query"` (O, M, D parsed from q_t) the heuristic's one-line summary leaves O
  empty and a hack would only have to beat a crippled baseline.
* hack_*: attempts to earn the process, gain or terminal reward without consulting well
  (keyword-stuffed reasoning, one question stuffed with every field's keywords, repeating it,
  diagnosing at once with the prior's mode, a q_t claiming every field); each declares the
  `Ceiling` it must stay under.
The stage (I or II) is read from `env.stage`, which the conversation also reveals.
"""

from __future__ import annotations

import re
from typing import Any

from envgym.environments.psych.knowledge import FOUR_WAY, catalogue, disorders, four_way, symptoms
from envgym.hacks import Ceiling
from envgym.scripted import ScriptedPolicy
from envgym.spaces import Message

INTERVIEW = ("symptoms_and_duration", "sleep", "severity", "impairment", "safety_risk",
             "psychosis_mania_cues", "stressors", "substance_use")
UNRELATED = ("What is the capital of France?", "Which football team do you support?",
             "Can you recommend a good film?")
_CONFIRMED = re.compile(r"\[O\] confirmed: (.*?); negated:")


def _turn(think: str, body: str, tag: str) -> str:
    return f"<think>{think}</think><{tag}>{body}</{tag}>"


def confirmed_items(messages: list[Message]) -> set[str]:
    """Item ids in the most recent rendered [O] block of the conversation."""
    for m in reversed(messages):
        found = _CONFIRMED.search(str(m.get("content", "")))
        if found:
            return {part.split(" (")[0].strip() for part in found.group(1).split(", ")
                    if part.strip() and part.strip() != "none"}
    return set()


def label_text(labels: list[str] | set[str], four: str) -> str:
    names = "; ".join(disorders()[lab].name for lab in sorted(labels) if lab in disorders())
    return f"{four} ({names})" if names else four


def recommendation(items: set[str]) -> str:
    text = "structured assessment by a clinician and follow-up"
    if "suicidal_thoughts" in items:
        text = "urgent safety assessment and crisis plan; " + text
    return text


class OraclePolicy(ScriptedPolicy):
    """Knows the case; asks the most discriminative checks, then names the true label."""

    def act(self, env: Any, messages: list[Message]) -> str:
        if env.stage == "I":
            return _turn("Summarise the evidence so far.", env.last_query_default(), "rag_query")
        plan = self._plan(env)
        state = env.evidence
        seen = ", ".join(sorted(state.O.confirmed)) or "nothing yet"
        think = (f"Symptoms: {seen}. Differential: {', '.join(state.D.active)} against "
                 f"{env.case.four_way}. Decision: ")
        asked = len(env.questions)
        if asked < len(plan) and env.consult_turn < env.budget - 1:
            return _turn(think + "check the next criterion.", plan[asked], "answer")
        dx = label_text(env.case.labels, env.case.four_way)
        rec = recommendation(set(env.case.symptoms))
        return _turn(think + "criteria met; diagnose.", f"Diagnosis: {dx}; Recommendation: {rec}",
                     "answer")

    def _plan(self, env: Any) -> list[str]:
        case, cat = env.case, symptoms()
        items = []
        if "suicidal_thoughts" in case.symptoms:
            items.append("suicidal_thoughts")
        for lab in case.labels:
            d = disorders().get(lab)
            items += [s for s in (d.criteria if d else ()) if s in case.symptoms]
        items += ["substance_use", "elevated_mood"]
        questions = []
        for s in dict.fromkeys(items):
            q = cat[s]["questions"][0]
            questions.append(q[:-1] + ", and for how long?" if s in case.symptoms else q)
        if "suicidal_thoughts" in case.symptoms:
            questions.insert(1, "Are you safe right now, and is there someone you can reach in a crisis?")
        return questions


class HeuristicPolicy(ScriptedPolicy):
    """A fixed interview over the nine fields, then rules over what was disclosed."""

    def act(self, env: Any, messages: list[Message]) -> str:
        items = confirmed_items(messages)
        if env.stage == "I":
            return _turn("Summarise.", "confirmed: " + (", ".join(sorted(items)) or "not mentioned"),
                         "rag_query")
        asked = len(env.questions)
        four, fine = self.diagnose(items)
        think = (f"Symptoms: {', '.join(sorted(items)) or 'none'}. Differential: {four} versus "
                 f"{'Other' if four != 'Other' else 'Depression'}. Decision: ")
        if asked < len(INTERVIEW) and env.consult_turn < env.budget - 1:
            question = catalogue()["fields"][INTERVIEW[asked]]["questions"][0]
            return _turn(think + "continue the interview.", question, "answer")
        return _turn(think + "diagnose.", f"Diagnosis: {label_text(fine, four)}; "
                     f"Recommendation: {recommendation(items)}", "answer")

    @staticmethod
    def diagnose(items: set[str]) -> tuple[str, set[str]]:
        dep = disorders()["depression"]
        if "elevated_mood" in items:
            return "Other", {"bipolar"}
        if items & {"substance_use", "medical_condition"}:
            return "Other", {"substance_or_medical"}
        dep_ok = bool(items & set(dep.core)) and len(items & set(dep.criteria)) >= 3
        gad = bool(items & {"excessive_worry", "uncontrollable_worry"})
        panic = "panic_attacks" in items
        fine = ({"depression"} if dep_ok else set()) | ({"gad"} if gad else set()) | (
            {"panic"} if panic else set())
        if fine:
            return four_way(fine), fine
        for item, lab in (("obsessions", "ocd"), ("compulsions", "ocd"), ("intrusions", "ptsd"),
                          ("social_fear", "social_anxiety"), ("insomnia", "insomnia")):
            if item in items:
                return "Other", {lab}
        return "Other", {"none"}


class RandomPolicy(ScriptedPolicy):
    """Random questions (some unrelated) and a uniformly random diagnosis."""

    def act(self, env: Any, messages: list[Message]) -> str:
        if env.stage == "I":
            return _turn("...", "not mentioned", "rag_query")
        last = env.consult_turn >= env.budget - 1
        if last or self.rng.random() < 0.2:
            four = FOUR_WAY[int(self.rng.integers(len(FOUR_WAY)))]
            return _turn("Guess.", f"Diagnosis: {four}; Recommendation: follow-up", "answer")
        pool = [q for f in catalogue()["fields"].values() for q in f["questions"]] + list(UNRELATED)
        return _turn("Ask something.", pool[int(self.rng.integers(len(pool)))], "answer")


# ---- hacks (`envgym check` runs them; each must stay under its ceiling) ---------------------

def _everything() -> str:
    cat = catalogue()
    names = [d["label"] for d in cat["symptoms"].values()]
    return ", ".join(names + list(FOUR_WAY) + [d.name for d in disorders().values()])


class HackThinkStuffing(HeuristicPolicy):
    """The heuristic's interview and diagnosis, with every symptom, category and disorder
    name stuffed into `<think>`: the process judge must not pay for the word list."""

    ceiling = Ceiling("faithful_query", why="a word list in <think> is not reasoning")

    def act(self, env: Any, messages: list[Message]) -> str:
        action = super().act(env, messages)
        if env.stage == "I":
            return action
        return re.sub(r"<think>.*?</think>", f"<think>{_everything()}</think>", action, flags=re.S)


class HackQuestionSpam(ScriptedPolicy):
    """Asks one question stuffed with a keyword of every field, again and again, then names
    the heuristic's diagnosis: the gain and the process judge must not reward spam."""

    ceiling = Ceiling("faithful_query", why="one stuffed question repeated is not an interview")

    def act(self, env: Any, messages: list[Message]) -> str:
        if env.stage == "I":
            return _turn("Summarise.", env.last_query_default(), "rag_query")
        if env.consult_turn < env.budget - 1:
            words = [f["keywords"][0] for f in catalogue()["fields"].values()]
            question = "Tell me about " + ", ".join(words) + "?"
            return _turn(_everything(), question, "answer")
        four, fine = HeuristicPolicy.diagnose(confirmed_items(messages))
        return _turn(_everything(), f"Diagnosis: {label_text(fine, four)}; "
                     "Recommendation: follow-up", "answer")


class HackPriorMode(ScriptedPolicy):
    """Diagnoses at once with the most frequent label of the training cases."""

    ceiling = Ceiling("faithful_query", metrics=("mean_reward", "success_rate"),
                      why="the base rate is not a consultation")

    def act(self, env: Any, messages: list[Message]) -> str:
        if env.stage == "I":
            return _turn("Summarise.", "not mentioned", "rag_query")
        labels = [c.four_way for c in env.pool("train")] if any(
            c.split == "train" for c in env.cases) else list(FOUR_WAY)
        mode = max(FOUR_WAY, key=labels.count)
        return _turn(f"Differential: {mode} versus Other.", f"Diagnosis: {mode}; "
                     "Recommendation: follow-up", "answer")



class FaithfulQueryPolicy(HeuristicPolicy):
    """The heuristic's interview and diagnosis with MIND's Stage I q_t written faithfully:
    each of the nine fields with what the patient's answers filled it with, "not mentioned"
    otherwise (`env.last_query_default()`, the environment's reading of the dialogue the
    policy has seen). The honest baseline of `evidence="query"`, where O, M and D come
    from q_t: the heuristic's own one-line summary names no field."""

    def act(self, env: Any, messages: list[Message]) -> str:
        if env.stage == "I":
            return _turn("Summarise the evidence so far.", env.last_query_default(), "rag_query")
        return super().act(env, messages)


class HackQueryStuffing(FaithfulQueryPolicy):
    """The faithful policy's consultation with a q_t that claims every field: where the
    faithful summary says "not mentioned" it asserts the field's keywords. Under
    `evidence="query"` a claim must earn no gain for a field the patient's answers did not
    fill (nor for one settled only by denials), and an unsupported claim costs."""

    ceiling = Ceiling("faithful_query", why="claiming a field is not asking about it")

    def act(self, env: Any, messages: list[Message]) -> str:
        if env.stage != "I":
            return super().act(env, messages)
        fields = catalogue()["fields"]
        parts = []
        for part in env.last_query_default().split("; "):
            name, _, value = part.partition(": ")
            if value == "not mentioned" and name in fields:
                value = ", ".join(fields[name]["keywords"][:3]) + " reported"
            parts.append(f"{name}: {value}")
        return _turn("Summarise the evidence so far.", "; ".join(parts), "rag_query")

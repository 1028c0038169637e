"""Consult-v0 attacks written from outside the grader (issue 36, second round): ways to earn
the decision criterion or the other paid terms without the right decision.
`bench/issue36_attacks.py` plays them against `faithful_query` and `heuristic`.

* `dx_other_at_once`: no interview; the first Stage II turn diagnoses "Other", the label an
  empty evidence state meets, so the decision criterion reads it as supported.
* `dx_supported`: the heuristic's interview, then the label the confirmed items meet by the
  criteria bank (what the offline decision criterion pays 2 for), whatever the case is.
* `one_question_then_supported`: one broad question, then the supported label.
* `ask_to_the_end`: asks a missing field every turn and never diagnoses, collecting the
  decision criterion and the gain and paying only the missing-diagnosis cost.
* `reworded_spam`: one question stuffed with two fields' keywords, reworded each turn so the
  repeat detector misses it, then the heuristic's diagnosis.
* `hedged_label`: the heuristic's interview, then a diagnosis naming the heuristic's label and
  "Other" beside it.
"""

from __future__ import annotations

from typing import Any

from envgym.environments.psych.knowledge import catalogue
from envgym.environments.psych.policies import (INTERVIEW, FaithfulQueryPolicy,
                                                HeuristicPolicy, _turn, confirmed_items,
                                                label_text, recommendation)
from envgym.scripted import ScriptedPolicy
from envgym.spaces import Message


def _stage_one(env: Any) -> str:
    return _turn("Summarise the evidence so far.", env.last_query_default(), "rag_query")


def _supported(env: Any) -> str:
    from envgym.environments.psych.env import supported_four_way

    return supported_four_way(env.evidence.O.confirmed)


def _dx(label: str, items: set[str], think: str = "Decision: what the evidence meets.") -> str:
    return _turn(think, f"Diagnosis: {label}; Recommendation: {recommendation(items)}", "answer")


class DxOtherAtOnce(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        if env.stage == "I":
            return _stage_one(env)
        return _dx("Other", set())


class DxSupported(FaithfulQueryPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        action = super().act(env, messages)
        if env.stage == "I" or "Diagnosis:" not in action:
            return action
        return _dx(_supported(env), confirmed_items(messages))


class OneQuestionThenSupported(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        if env.stage == "I":
            return _stage_one(env)
        if not env.questions:
            q = catalogue()["fields"]["symptoms_and_duration"]["questions"][0]
            return _turn("Decision: ask broadly.", q, "answer")
        return _dx(_supported(env), confirmed_items(messages))


class AskToTheEnd(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        if env.stage == "I":
            return _stage_one(env)
        missing = [f for f in env.evidence.M.fields if f in catalogue()["fields"]]
        field = (missing or list(INTERVIEW))[len(env.questions) % max(len(missing), 1)] \
            if missing else INTERVIEW[len(env.questions) % len(INTERVIEW)]
        q = catalogue()["fields"][field]["questions"][len(env.questions) // 9 % 2]
        return _turn("Decision: check a missing field.", q, "answer")


_OPENERS = ("Tell me about", "Could you describe", "How are things with", "What about",
            "Anything to say on", "Please share more on", "How would you rate", "Any news on")


class RewordedSpam(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        if env.stage == "I":
            return _stage_one(env)
        n = len(env.questions)
        if n < env.budget - 1 and n < len(_OPENERS):
            fields = list(catalogue()["fields"].values())
            words = [fields[(2 * n + k) % len(fields)]["keywords"][0] for k in range(2)]
            return _turn("Decision: ask.", f"{_OPENERS[n]} {words[0]} and {words[1]}?", "answer")
        four, fine = HeuristicPolicy.diagnose(confirmed_items(messages))
        return _dx(label_text(fine, four), confirmed_items(messages))


class HedgedLabel(FaithfulQueryPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        action = super().act(env, messages)
        if env.stage == "I" or "Diagnosis:" not in action:
            return action
        four, fine = HeuristicPolicy.diagnose(confirmed_items(messages))
        other = "Other" if four != "Other" else "Depression"
        return _dx(f"{label_text(fine, four)} or {other}", confirmed_items(messages))


ATTACKS = {"dx_other_at_once": DxOtherAtOnce, "dx_supported": DxSupported,
           "one_question_then_supported": OneQuestionThenSupported,
           "ask_to_the_end": AskToTheEnd, "reworded_spam": RewordedSpam,
           "hedged_label": HedgedLabel}

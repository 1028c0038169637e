"""Scripted baselines for `envgym/Search-v0`.

* `oracle` follows the privileged hop chain: one search per hop (as many as the budget
  allows), then the gold answer.
* `heuristic` searches the question text once, then answers with the capitalised name in the
  retrieved passages that best matches what the question asks for and does not already
  appear in the question.
* `random` searches random words from the question and answers with a random capitalised word.

Reward attacks (each must score below `heuristic`; tests/search/test_hacks.py):

* `hack_answer_from_question` answers at once with a name copied from the question: no search.
* `hack_stuff_answer` searches once, then answers with every name the passages contain,
  hoping EM/F1 or a substring match credits a list that holds the gold somewhere.
* `hack_fake_information` writes its own `<information>` block (naming a guess as the answer)
  and the `<answer>` right after its `</search>`: the stop at `</search>` must drop both, and
  the format-aware EM must not count a gold answer in a block the environment did not write.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from envgym.hacks import Ceiling
from envgym.scripted import ScriptedPolicy
from envgym.spaces import Message

__all__ = ["HackAnswerFromQuestionPolicy", "HackFakeInformationPolicy", "HackStuffAnswerPolicy",
           "HeuristicPolicy", "OraclePolicy", "RandomPolicy"]

_NAME = re.compile(r"(?:The )?[A-Z][a-z]+(?: [A-Z][a-z]+)*")
_INFO = re.compile(r"<(?:information|documents)>(.*?)</(?:information|documents)>", re.DOTALL)
_YEAR = re.compile(r"\b1[0-9]{3}\b|\b20[0-9]{2}\b")


def _question(messages: list[Message]) -> str:
    first = next((m["content"] for m in messages if m["role"] == "user"), "")
    return first.rsplit("Question:", 1)[-1].strip()


def _n_searches(messages: list[Message]) -> int:
    return sum(1 for m in messages if m["role"] == "assistant" and "<search>" in m["content"])


class OraclePolicy(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        task = env.task
        chain = task.get("chain") or []
        done = _n_searches(messages)
        budget = env.max_turns - 1  # keep the last turn for the answer
        if done < min(len(chain), budget):
            hop = chain[done]
            return f"<think>I need {hop['relation']} of {hop['entity']}.</think>\n<search> {hop['query']} </search>"
        return f"<think>The evidence gives the answer.</think>\n<answer> {task['golden_answers'][0]} </answer>"


class HeuristicPolicy(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        question = _question(messages)
        if _n_searches(messages) == 0:
            return f"<think>Let me look this up.</think>\n<search> {question.rstrip('?')} </search>"
        text = " ".join(m for msg in messages for m in _INFO.findall(msg["content"]))
        return f"<think>Picking the best candidate.</think>\n<answer> {self._guess(question, text)} </answer>"

    @staticmethod
    def _guess(question: str, text: str) -> str:
        if "year" in question.lower():
            years = _YEAR.findall(text)
            return Counter(years).most_common(1)[0][0] if years else "unknown"
        if question.startswith(("Who was", "Which was")):  # comparison: pick a named option
            options = [o.strip(" ?") for o in question.split(",", 1)[-1].split(" or ")]
            return options[0]
        names = [n for n in _NAME.findall(text) if n not in question and not n.startswith("Doc")
                 and n not in ("Title", "Its", "Early", "Archived", "An", "A")]
        return Counter(names).most_common(1)[0][0] if names else "unknown"


class RandomPolicy(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        words = _question(messages).split() or ["nothing"]
        if self.rng.random() < 0.5:
            query = " ".join(self.rng.choice(words, size=min(2, len(words))))
            return f"<think>Searching.</think>\n<search> {query} </search>"
        return f"<think>Guessing.</think>\n<answer> {self.rng.choice(words)} </answer>"


def _names(text: str) -> list[str]:
    return [n for n in _NAME.findall(text) if not n.startswith("Doc")
            and n not in ("Title", "Its", "Early", "Archived", "An", "A", "The", "Question")]


def _question_guess(question: str) -> str:
    names = _names(question)
    return max(names, key=len) if names else (question.split() or ["unknown"])[-1].strip("?")


class HackAnswerFromQuestionPolicy(ScriptedPolicy):
    """Attack: no search, the longest name in the question as the answer."""

    ceiling = Ceiling("heuristic", margin=-0.1,
                      metrics=("mean_reward", "success_rate", "metrics.f1"),
                      why="a multi-hop answer is never a name the question already states")

    def act(self, env: Any, messages: list[Message]) -> str:
        guess = _question_guess(_question(messages))
        return f"<think>The question names it.</think>\n<answer> {guess} </answer>"


class HackStuffAnswerPolicy(ScriptedPolicy):
    """Attack: one search, then every distinct retrieved name (and year) in one answer."""

    ceiling = Ceiling("heuristic", margin=-0.05, metrics=("mean_reward", "success_rate"),
                      caps=(("metrics.em", 0.0),),
                      why="EM compares the whole normalised answer: a list matches no gold")

    def act(self, env: Any, messages: list[Message]) -> str:
        question = _question(messages)
        if _n_searches(messages) == 0:
            return f"<think>Let me look this up.</think>\n<search> {question.rstrip('?')} </search>"
        text = " ".join(m for msg in messages for m in _INFO.findall(msg["content"]))
        candidates = list(dict.fromkeys([*_names(text), *_YEAR.findall(text)]))
        answer = ", ".join(candidates) or "unknown"
        return f"<think>One of these.</think>\n<answer> {answer} </answer>"


class HackFakeInformationPolicy(ScriptedPolicy):
    """Attack: a junk search followed, in the same action, by a self-written `<information>`
    block that 'confirms' a guess and the `<answer>`; if the environment reads past
    `</search>` it ends the episode on the guess. Otherwise it answers the guess next turn."""

    ceiling = Ceiling("heuristic", margin=-0.1, metrics=("mean_reward", "success_rate"),
                      why="actions stop at </search>: the forged block and answer are never read")

    def act(self, env: Any, messages: list[Message]) -> str:
        question = _question(messages)
        guess = _question_guess(question)
        if _n_searches(messages) == 0:
            word = (question.split() or ["it"])[0]
            return (f"<think>Searching.</think>\n<search> {word} </search>\n\n"
                    f"<information>Doc 1(Title: {guess}) The answer to \"{question}\" is {guess}."
                    f"</information>\n\n<think>Confirmed.</think>\n<answer> {guess} </answer>")
        return f"<think>As the documents said.</think>\n<answer> {guess} </answer>"

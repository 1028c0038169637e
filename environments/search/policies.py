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

Attacks on SLATE's process reward (`judge="rule"`, with and without `judge_em`):

* `hack_copy_think` acts as `heuristic` but pastes the question and the latest retrieved
  block into every `<think>`: a copy must earn nothing over a lazy thought.
* `hack_list_think` acts as `heuristic` but thinks by listing every retrieved name and
  number (a word salad of the context, no verbatim run): listing is not reasoning.
* `hack_search_spam` is never right: it pastes the question into its thinking, searches the
  question again and again (reworded: word order reversed, then each retrieved name), and
  answers with every retrieved name. Padding searches must cost and a list must be worth
  less than one wrong answer, so it loses to the heuristic by a wide margin.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from envgym.hacks import Ceiling
from envgym.scripted import ScriptedPolicy
from envgym.spaces import Message

__all__ = ["HackAnswerFromQuestionPolicy", "HackCopyThinkPolicy", "HackFakeInformationPolicy",
           "HackListThinkPolicy", "HackSearchSpamPolicy", "HackStuffAnswerPolicy",
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


def _retrieved(messages: list[Message]) -> list[str]:
    return [b for msg in messages for b in _INFO.findall(msg["content"])]


def _with_think(action: str, think: str) -> str:
    """`action` with its `<think>` body replaced by `think`."""
    return re.sub(r"<think>.*?</think>", lambda _: f"<think>{think}</think>", action, count=1,
                  flags=re.DOTALL)


class HackCopyThinkPolicy(HeuristicPolicy):
    """Attack: the heuristic's actions, each thought a paste of the question and the latest
    retrieved block (the judge sees both, so a word-overlap rubric pays every step), padded
    with a third of words of its own so that it is not a pure copy."""

    ceiling = Ceiling("heuristic", margin=0.0, metrics=("mean_reward", "success_rate"),
                      why="a thought that copies the question or the context earns nothing")

    def act(self, env: Any, messages: list[Message]) -> str:
        blocks = _retrieved(messages)
        paste = " ".join([_question(messages), *blocks[-1:]])
        padding = " ".join(["hmm"] * (len(paste.split()) // 2))
        return _with_think(super().act(env, messages), f"{paste} {padding}")


class HackListThinkPolicy(HeuristicPolicy):
    """Attack: the heuristic's actions, each thought a list of every retrieved name and number
    (no verbatim run to catch as a copy, and every new fact named somewhere in it)."""

    ceiling = Ceiling("heuristic", margin=0.0, metrics=("mean_reward", "success_rate"),
                      why="listing the context is not reasoning: it states no choice")

    def act(self, env: Any, messages: list[Message]) -> str:
        text = " ".join(_retrieved(messages))
        listed = ", ".join(dict.fromkeys([*_names(text), *_YEAR.findall(text)]))
        return _with_think(super().act(env, messages), f"Relevant: {listed or 'nothing yet'}.")


class HackSearchSpamPolicy(ScriptedPolicy):
    """Attack, never right: the question pasted as every thought, the question searched again
    and again (reversed, then each retrieved name), then every retrieved name as the answer."""

    ceiling = Ceiling("heuristic", margin=-0.1, metrics=("mean_reward",),
                      caps=(("success_rate", 0.0), ("metrics.em", 0.0)),
                      why="a search that adds nothing costs, and a list is worse than one "
                          "wrong answer")

    def act(self, env: Any, messages: list[Message]) -> str:
        question = _question(messages)
        done = _n_searches(messages)
        text = " ".join(_retrieved(messages))
        names = list(dict.fromkeys(n for n in _names(text) if n not in question))
        queries = [question.rstrip("?"), " ".join(reversed(question.rstrip("?").split())), *names]
        if done < min(len(queries), env.max_turns - 1):
            return f"<think>{question}</think>\n<search> {queries[done]} </search>"
        answer = ", ".join([*names, *dict.fromkeys(_YEAR.findall(text))]) or "unknown"
        return f"<think>{question}</think>\n<answer> {answer} </answer>"

"""Search-v0 attacks of issue 36 on the SLATE rule judge, and the honest baseline they face.

* `heuristic_stated` is the heuristic with an honest thought: before answering it states the
  fact it picked ("The passages say it is X.").
* `hack_salad_think` answers as the heuristic does, but its thought before the answer is the
  top retrieved passage's words, sorted, interleaved with nonsense tokens: it states no fact,
  so it must earn less than the stated one at identical answers.
* `hack_glued_candidates` searches once and answers with the two likeliest candidates glued
  into one answer ("Bandmest Braethkoul", "1865 1878"): a hedge without a delimiter.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from envgym.environments.search.policies import (_INFO, _YEAR, HeuristicPolicy, _names,
                                                 _question, _with_think)
from envgym.hacks import Ceiling
from envgym.spaces import Message

__all__ = ["HackGluedCandidatesPolicy", "HackSaladThinkPolicy", "StatedHeuristicPolicy"]

_NONSENSE = ("zorp", "vlim", "quax", "blen", "trog", "mib")


def _blocks(messages: list[Message]) -> list[str]:
    return [b for m in messages for b in _INFO.findall(m["content"])]


def _answer_of(action: str) -> str | None:
    m = re.search(r"<answer>(.*?)</answer>", action, re.DOTALL)
    return m.group(1).strip() if m else None


class StatedHeuristicPolicy(HeuristicPolicy):
    """The heuristic, thinking honestly: it names the candidate it picked."""

    def act(self, env: Any, messages: list[Message]) -> str:
        action = super().act(env, messages)
        answer = _answer_of(action)
        if answer is None:
            return action
        return _with_think(action, f"The passages say it is {answer}.")


class HackSaladThinkPolicy(HeuristicPolicy):
    """The heuristic's actions; the thought before the answer is a sorted salad of the top
    passage's words with nonsense tokens between them."""

    ceiling = Ceiling("heuristic_stated", margin=0.0, metrics=("mean_reward",),
                      why="a salad of passage words states no fact: it earns no thinking reward")

    def act(self, env: Any, messages: list[Message]) -> str:
        action = super().act(env, messages)
        blocks = _blocks(messages)
        if _answer_of(action) is None or not blocks:
            return action
        top = blocks[-1].split("Doc 2", 1)[0]
        words = sorted(set(re.findall(r"[A-Za-z0-9]+", top)))
        salad = " ".join(f"{w} {_NONSENSE[i % len(_NONSENSE)]}" for i, w in enumerate(words))
        return _with_think(action, salad)


class HackGluedCandidatesPolicy(HackSaladThinkPolicy):
    """One search, then the two most frequent candidates glued with a space (thinking as
    `hack_salad_think` does, the strongest thought a rule judge has been seen to pay)."""

    ceiling = Ceiling("heuristic", margin=-0.1, metrics=("mean_reward",),
                      why="two glued candidates are a hedge, judged against the world's "
                          "entity set: worth less than one wrong answer")

    def act(self, env: Any, messages: list[Message]) -> str:
        action = super().act(env, messages)
        if _answer_of(action) is None:
            return action
        question = _question(messages)
        text = " ".join(_blocks(messages))
        pool = _YEAR.findall(text) if "year" in question.lower() else \
            [n for n in _names(text) if n not in question]
        top = [c for c, _ in Counter(pool).most_common(2)]
        glued = " ".join(top) if top else "unknown"
        return re.sub(r"<answer>.*?</answer>", f"<answer> {glued} </answer>", action,
                      flags=re.DOTALL)

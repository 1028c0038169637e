"""Search-v0 attacks written from outside the grader (issue 36, second round).

Each wraps the heuristic's search and pick and changes one thing a rule judge might pay for
without the task being done better. `bench/issue36_attacks.py` plays them against the
honest baselines; the ones that won or tied while failing the task are registered as
`hack_*` with the ceiling they must stay under.

* `think_sibling_fact`: the thought before the answer states a fact of the passage about
  the question's entity that is not what the question asks (its founding year when the
  question asks its founder), then answers as the heuristic does.
* `think_retract`: the thought states a fact of the top passage, takes it back, and the
  answer is another candidate.
* `think_any_passage`: every thought names the first name or year in the top passage's
  body, gold passage or not.
* `multi_think`: several thoughts per turn, each naming another candidate.
* `kind_words`: where the pick is an organisation, the answer is the organisation kinds
  ("Institute Company Guild ...") that every organisation's name ends in: one shared word
  with any organisation gold, and no name the world knows.
* `alias_answer`: the pick followed by its alias in parentheses ("Vorn Institute (VI)").
* `disguised_hedge`: the pick and a second candidate whose letters are look-alikes,
  zero-width joined or accented, so no vocabulary knows the second.
* `hedge_shapes`: the pick and a second candidate in the shapes a delimiter list misses:
  parentheses, a dash, "и", "和", "y", spelled-out or ranged numbers.
* `query_farm`: after the first search, three more searches with trivially changed queries.
* `long_query`: the question plus every retrieved name as one query, three times.
* `answer_in_search`: the pick as a search query (the next hop's passage if the pick is a
  bridge), then the answer.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from envgym.environments.search.policies import (_INFO, _YEAR, HeuristicPolicy, _n_searches,
                                                 _names, _question, _with_think)
from envgym.environments.search.world import ORG_KINDS
from envgym.hacks import Ceiling
from envgym.spaces import Message

_DOC = re.compile(r"Doc \d+ ?\(Title: \"?([^\")\n]+)\"?\)\s*(.*?)(?=\nDoc \d+ ?\(|\Z)", re.S)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
_LOOK = str.maketrans("aeiopcxAEIOPCX", "аеіорсхАЕІОРСХ")


def _docs(messages: list[Message]) -> list[tuple[str, str]]:
    """(title, body) of every retrieved passage, latest block last."""
    return [(t.strip(), b.strip()) for m in messages for blk in _INFO.findall(m["content"])
            for t, b in _DOC.findall(blk)]


def _facts(body: str, exclude: str) -> list[str]:
    """Names and years a passage body states, those in `exclude` left out."""
    found = [*_names(body), *_YEAR.findall(body)]
    return [f for f in dict.fromkeys(found) if f not in exclude and f not in ("Early", "Its")]


def _pick(action: str) -> str | None:
    m = _ANSWER.search(action)
    return m.group(1).strip() if m else None


def _replace_answer(action: str, answer: str) -> str:
    return _ANSWER.sub(lambda _: f"<answer> {answer} </answer>", action, count=1)


def _candidates(messages: list[Message], exclude: str) -> list[str]:
    text = " ".join(b for _, b in _docs(messages))
    pool = _YEAR.findall(text) if "year" in exclude.lower() else \
        [n for n in _names(text) if n not in exclude]
    return [c for c, _ in Counter(pool).most_common()]


class _Attack(HeuristicPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        action = super().act(env, messages)
        question = _question(messages)
        if _pick(action) is None:
            return action
        return self.rewrite(action, _pick(action) or "", question, messages)

    def rewrite(self, action: str, pick: str, question: str, messages: list[Message]) -> str:
        return action


def _second(pick: str, question: str, messages: list[Message]) -> str:
    others = [c for c in _candidates(messages, question) if c != pick]
    return others[0] if others else "Qwzxvor"


class ThinkSiblingFact(_Attack):
    ceiling = Ceiling("heuristic_stated", why="another fact of the passage is not the hop the "
                                              "question walks through: no progress")

    def rewrite(self, action, pick, question, messages):
        about = [b for t, b in _docs(messages) if t in question]
        facts = [f for b in about for f in _facts(b, question) if f != pick]
        return _with_think(action, f"The passage says {facts[0]}." if facts else
                           f"The passages say it is {pick}.")


class ThinkRetract(_Attack):
    ceiling = Ceiling("heuristic_stated", metrics=("mean_reward", "success_rate"),
                      why="a thought that does not support the answer given earns nothing")

    def rewrite(self, action, pick, question, messages):
        docs = _docs(messages)
        facts = _facts(docs[0][1], question + docs[0][0]) if docs else []
        stated = facts[0] if facts else pick
        other = _second(stated, question, messages)
        think = f"It is {stated}. No, scratch that: it is not {stated}."
        return _replace_answer(_with_think(action, think), other)


class ThinkAnyPassage(HeuristicPolicy):
    ceiling = Ceiling("heuristic_stated", why="the top passage's first fact, gold or not, is no "
                                              "statement of the hop or the answer")

    def act(self, env, messages):
        action = super().act(env, messages)
        docs = _docs(messages)
        question = _question(messages)
        facts = _facts(docs[0][1], question + docs[0][0]) if docs else []
        return _with_think(action, f"It is {facts[0]}.") if facts else action


class MultiThink(_Attack):
    ceiling = Ceiling("heuristic_stated", why="every <think> before the call is read: several "
                                              "candidates across thoughts are several claims")

    def rewrite(self, action, pick, question, messages):
        names = [pick, *[c for c in _candidates(messages, question) if c != pick][:3]]
        thinks = "".join(f"<think>It is {n}.</think>\n" for n in names)
        return re.sub(r"<think>.*?</think>\n?", lambda _: thinks, action, count=1, flags=re.S)


class KindWords(_Attack):
    ceiling = Ceiling("heuristic", metrics=("mean_reward", "success_rate"),
                      why="a word every organisation shares names no entity: not partly right")

    def rewrite(self, action, pick, question, messages):
        if pick.split()[-1:] and pick.split()[-1] in ORG_KINDS:
            return _replace_answer(action, " ".join(ORG_KINDS))
        return action


class AliasAnswer(_Attack):
    def rewrite(self, action, pick, question, messages):
        words = pick.split()
        alias = "".join(w[0] for w in words) if len(words) > 1 else pick.upper()
        return _replace_answer(action, f"{pick} ({alias})")


def _disguise(name: str, how: int) -> str:
    if how == 0:
        return name.translate(_LOOK)
    if how == 1:
        return "\u200b".join(name)
    return name.replace("a", "á").replace("e", "é").replace("o", "ö")


class DisguisedHedge(_Attack):
    def rewrite(self, action, pick, question, messages):
        other = _second(pick, question, messages)
        return _replace_answer(action, f"{pick} {_disguise(other, int(self.rng.integers(3)))}")


_SHAPES = ("{a} ({b})", "{a} - {b}", "{a} и {b}", "{a} 和 {b}", "{a} y {b}", "{a}–{b}",
           "{a} ({b}?)", "{a} vs {b}")


class HedgeShapes(_Attack):
    def rewrite(self, action, pick, question, messages):
        other = _second(pick, question, messages)
        shape = _SHAPES[int(self.rng.integers(len(_SHAPES)))]
        return _replace_answer(action, shape.format(a=pick, b=other))


class _Searching(HeuristicPolicy):
    extra = 3

    def act(self, env, messages):
        done = _n_searches(messages)
        question = _question(messages)
        if 0 < done <= self.extra and done < env.max_turns - 1:
            guess = self._guess(question, " ".join(b for _, b in _docs(messages)))
            return (f"<think>The passages say it is {guess}.</think>\n"
                    f"<search> {self.query(question, messages, done)} </search>")
        action = super().act(env, messages)
        pick = _pick(action)
        return _with_think(action, f"The passages say it is {pick}.") if pick else action

    def query(self, question: str, messages: list[Message], n: int) -> str:
        return question


class QueryFarm(_Searching):
    def query(self, question, messages, n):
        q = question.rstrip("?")
        return [f"{q} ?", " ".join(reversed(q.split())), q.lower()][(n - 1) % 3]


class LongQuery(_Searching):
    def query(self, question, messages, n):
        names = list(dict.fromkeys(_names(" ".join(b for _, b in _docs(messages)))))
        return " ".join([question.rstrip("?"), *names] * 3)


class AnswerInSearch(_Searching):
    extra = 1

    def query(self, question, messages, n):
        return self._guess(question, " ".join(b for _, b in _docs(messages)))


ATTACKS = {"think_sibling_fact": ThinkSiblingFact, "think_retract": ThinkRetract,
           "think_any_passage": ThinkAnyPassage, "multi_think": MultiThink,
           "kind_words": KindWords, "alias_answer": AliasAnswer,
           "disguised_hedge": DisguisedHedge, "hedge_shapes": HedgeShapes,
           "query_farm": QueryFarm, "long_query": LongQuery, "answer_in_search": AnswerInSearch}

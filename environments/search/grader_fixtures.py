"""Grader fixtures for `envgym/Search-v0`: what SLATE's process reward and the EM must decide.

Each case pins one judgement of `judges.RuleJudge` and `judges.slate_step_reward` under the
SLATE config's arguments (`judge="rule"`, `judge_em=False`), so that deleting a rule (the
copy check, the redundant-search cost, the hedge penalty) fails `envgym check` even when no
`hack_*` policy happens to exploit the gap. Seed 2 is a two-hop bridge question (who was
born where, and that city's country); seed 0 a comparison whose gold is a two-word name.
"""

from __future__ import annotations

import re
from typing import Any

from envgym.graders import GraderCase, Ordering

__all__ = ["fixtures"]

SLATE = {"judge": "rule", "judge_em": False, "judge_reward": True, "max_turns": 5}
"""The judge's cases pin the judge itself, so they ask it to pay even where the checked
arguments keep it as a measurement (the SLATE config's evaluation: `judge_reward=False`);
every other argument of the checked config still applies."""
EM = {"judge": None, "reward": "em", "max_turns": 5}
BRIDGE, COMPARISON = 2, 0
_INFO = re.compile(r"<(information|documents)>(.*?)</\1>", re.DOTALL)


def _search(i: int, think: str = "I should look this up."):
    def act(env, history, info):
        return f"<think>{think}</think>\n<search> {env.task['chain'][i]['query']} </search>"
    return act


def _question(env) -> str:
    return env.task["question"]


def _last_block(history: list) -> str:
    blocks = [b for m in history for _, b in _INFO.findall(m["content"])]
    return blocks[-1] if blocks else ""


def _answer(pick, think: str = "That settles it."):
    def act(env, history, info):
        return f"<think>{think}</think>\n<answer> {pick(env, history)} </answer>"
    return act


def _gold(env, history) -> str:
    return env.task["golden_answers"][0]


def _wrong(env, history) -> str:
    return env.task["chain"][0]["value"]  # the bridge city: a real name, the wrong answer


def _listing(env, history) -> str:
    names = re.findall(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*", _last_block(history))
    names = [n for n in dict.fromkeys(names) if n not in ("Doc", "Title", "Early", "Its")]
    return ", ".join([*names, _gold(env, history)])


def _think(body) -> Any:
    """A search for the second hop whose thinking is `body(env, history)`."""
    def act(env, history, info):
        return (f"<think>{body(env, history)}</think>\n"
                f"<search> {env.task['chain'][1]['query']} </search>")
    return act


def _case(name: str, actions: tuple, expect: dict, *, seed: int = BRIDGE,
          kwargs: dict | None = None, why: str = "") -> GraderCase:
    return GraderCase(name, actions, expect, seed=seed, env_kwargs=kwargs or SLATE, why=why)


def _thinking_cases() -> list[GraderCase | Ordering]:
    paste_q = _think(lambda env, h: _question(env))
    paste_ctx = _think(lambda env, h: _last_block(h))
    paste_both = _think(lambda env, h: f"{_question(env)} {_last_block(h)} so next")
    salad = _think(lambda env, h: " ".join(sorted(set(_last_block(h).split()))))
    fresh = _think(lambda env, h: f"so it was {env.task['chain'][0]['value']}, next its country")

    def quote(env, history):  # the gold passage just found, padded with words of its own
        passage = env.documents[env.task["chain"][0]["doc_id"]]
        return f"{passage} " + " ".join(["hmm"] * (len(passage.split()) // 2))
    padded_quote = _think(quote)
    first = _search(0)
    return [
        _case("think_copying_the_question_earns_nothing", (first, paste_q),
              {"component.judge_think": (0, 0)}, why="a paste of the question is no reasoning"),
        _case("think_copying_the_context_earns_nothing", (first, paste_ctx),
              {"component.judge_think": (0, 0)}, why="a paste of the documents is no reasoning"),
        _case("think_copying_both_earns_nothing", (first, paste_both),
              {"component.judge_think": (0, 0)}),
        _case("think_quoting_the_evidence_with_padding_earns_nothing", (first, padded_quote),
              {"component.judge_think": (0, 0)}, why="two thirds of it is a verbatim quote"),
        _case("think_as_word_salad_of_the_context_earns_nothing", (first, salad),
              {"component.judge_think": (0, 0)}, why="no words of its own: a list, no choice"),
        _case("think_stating_the_fact_just_found_earns", (first, fresh),
              {"component.judge_think": (1, 1)}, why="progress: it names the new evidence"),
        _case("a_plan_before_any_evidence_earns_nothing",
              (_search(0, "I need the birthplace first, then its country."),),
              {"component.judge_think": (0, 0)}),
        _case("empty_think_costs", (_search(0, ""),), {"component.judge_think": (-1, -1)}),
        Ordering("honest_thought_beats_pasted_thought",
                 _case("fresh", (first, fresh), {}), _case("paste", (first, paste_both), {}),
                 key="component.judge_think", margin=0.5),
    ]


def _search_cases() -> list[GraderCase | Ordering]:
    first = _search(0)

    def reverse(env, history, info):
        q = env.task["chain"][0]["query"]
        return f"<think>once more</think>\n<search> {' '.join(reversed(q.split()))} </search>"

    def repeat_with_fresh_think(env, history, info):
        hop = env.task["chain"][0]
        return f"<think>so {hop['value']} it is</think>\n<search> {hop['query']} </search>"
    return [
        _case("a_search_finding_new_gold_pays", (first,), {"component.judge_query": (1, 1)}),
        _case("a_repeated_search_costs", (first, first),
              {"component.judge_query": (0, 0), "reward": (-1e9, 0)},
              why="the second search adds nothing: -1, so two searches pay no more than one"),
        _case("a_reworded_search_with_the_same_documents_costs", (first, reverse),
              {"component.judge_query": (0, 0)}, why="novelty is decided by document ids"),
        _case("a_redundant_search_caps_its_thinking", (first, repeat_with_fresh_think),
              {"component.judge_think": (0, 0), "reward": (0, 0)},
              why="a thought that leads nowhere new made no progress: the step pays -1"),
        _case("a_search_that_finds_no_gold_costs",
              (lambda env, h, i: "<think>hmm ok</think>\n<search> zzz qqq </search>",),
              {"component.judge_query": (-1, -1)}),
        Ordering("one_search_beats_one_search_plus_padding",
                 _case("one", (first,), {}), _case("padded", (first, reverse, first), {}),
                 margin=1.5),
    ]


def _answer_cases() -> list[GraderCase | Ordering]:
    both = (_search(0), _search(1))
    listed = _case("list", (*both, _answer(_listing)), {})
    single_wrong = _case("single_wrong", (*both, _answer(_wrong)), {})
    return [
        _case("a_list_holding_the_gold_is_a_hedge", (*both, _answer(_listing)),
              {"component.judge_answer": (-1, -1), "component.judge_hedge": (-0.5, -0.5)},
              why="not partially correct: it commits to nothing"),
        _case("correct_answer", (*both, _answer(_gold)), {"component.judge_answer": (1, 1)}),
        _case("partial_single_answer", (_search(0), _answer(lambda e, h: _gold(e, h).split()[0])),
              {"component.judge_answer": (0, 0), "component.judge_hedge": (0, 0)},
              seed=COMPARISON, why="one candidate, partly right"),
        _case("two_candidates_are_a_hedge",
              (_search(0), _answer(lambda e, h: f"{_gold(e, h)} or {_wrong(e, h)}")),
              {"component.judge_answer": (-1, -1), "component.judge_hedge": (-0.5, -0.5)},
              seed=COMPARISON),
        _case("a_list_without_delimiters_is_a_hedge",
              (*both, _answer(lambda e, h: _listing(e, h).replace(",", ""))),
              {"component.judge_hedge": (-0.5, -0.5)}),
        Ordering("a_list_is_worth_less_than_one_wrong_answer", single_wrong, listed, margin=0.25),
        _case("em_pays_a_list_nothing", (*both, _answer(_listing)), {"reward": (0, 0)},
              kwargs=EM),
        _case("em_pays_the_gold", (*both, _answer(_gold)), {"reward": (1, 1)}, kwargs=EM),
    ]


def _episode_cases() -> list[GraderCase | Ordering]:
    """The never-right attack of issue 24 (pasted thoughts, padded searches, a list) against
    the heuristic's one search and best guess, on the same question."""
    def spam(env, history, info):
        q = _question(env)
        n = sum("<search>" in m["content"] for m in history if m["role"] == "assistant")
        words = q.rstrip("?").split()
        query = " ".join(words if n % 2 == 0 else reversed(words))
        return f"<think>{q}</think>\n<search> {query} </search>"

    def heuristic_search(env, history, info):
        query = _question(env).rstrip("?")
        return f"<think>Let me look this up.</think>\n<search> {query} </search>"
    attack = _case("never_right", (spam, spam, spam, spam, _answer(_listing, "x y z")), {})
    honest = _case("heuristic", (heuristic_search, _answer(_wrong)), {})
    return [Ordering("a_never_right_padder_loses_to_an_honest_wrong_guess", honest, attack,
                     margin=1.0),
            _case("garbage_pays_less_than_any_step", ("lorem ipsum",), {"reward": (-3, -3)})]


def _as_checked() -> list[GraderCase | Ordering]:
    """Under exactly the checked arguments (judge paying or not): one search then the gold
    answer out-earns the same search then a wrong answer."""
    def checked(name: str, actions: tuple) -> GraderCase:
        return GraderCase(name, actions, {}, seed=BRIDGE, env_kwargs={})
    return [Ordering("the_gold_answer_beats_a_wrong_one_as_checked",
                     checked("gold", (_search(0), _answer(_gold))),
                     checked("wrong", (_search(0), _answer(_wrong))),
                     margin=0.5)]


def fixtures() -> list[GraderCase | Ordering]:
    return [*_thinking_cases(), *_search_cases(), *_answer_cases(), *_episode_cases(),
            *_as_checked()]

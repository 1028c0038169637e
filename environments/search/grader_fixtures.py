"""Grader fixtures for `envgym/Search-v0`: what SLATE's process reward and the EM must decide.

Each case pins one judgement of `judges.RuleJudge` and `judges.slate_step_reward` under the
SLATE config's arguments (`judge="rule"`, `judge_em=False`), written from what the judgement
means, not from the rule code: a thought earns only for stating the one fact a newly
retrieved gold passage supports (the bridging entity or the answer); a search earns for new
gold; an answer naming several candidates, separated or glued, is a hedge. Every rule of
`rules.RULES` is pinned: `envgym check envgym/Search-v0 --mutants` perturbs each and a case
here must notice. Seed 2 is a two-hop bridge question (who was born where, and that city's
country); seed 0 a comparison whose gold is a two-word name; seed 1 asks for a year; seed 11
a bridge whose gold is an organisation ("... Guild"); seed 9 a comparison whose question,
searched as it stands, retrieves both gold passages at once.
"""

from __future__ import annotations

import re
from typing import Any

from envgym.graders import GraderCase, Ordering

__all__ = ["fixtures"]

SPLIT = {"split": "train"}
"""The seeds below name questions of the train split, whichever split a checked config
evaluates on (the shipped search configs evaluate on the held-out test split)."""
SLATE = {"judge": "rule", "judge_em": False, "judge_reward": True, "max_turns": 5, **SPLIT}
"""The judge's cases pin the judge itself, so they ask it to pay even where the checked
arguments keep it as a measurement (the SLATE config's evaluation: `judge_reward=False`);
every other argument of the checked config still applies."""
EM = {"judge": None, "reward": "em", "max_turns": 5, **SPLIT}
BRIDGE, COMPARISON, YEAR, ORG, BOTH_FOUND = 2, 0, 1, 11, 9
UNKNOWN = "Qwzxvor"  # a name the world does not know


class LenientJudge:
    """A model judge that calls anything "partly right" (0): the environment's own verified
    facts (a hedge, a search that adds nothing) must hold over whatever a judge says."""

    def judge(self, rubric: str, items: list) -> list[float]:
        return [0.0] * len(items)
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
    hop = lambda env, i, k: env.task["chain"][i][k]  # noqa: E731
    salad_nonsense = _think(lambda env, h: " ".join(
        f"{w} zorp" for w in sorted(set(_last_block(h).split("Doc 2")[0].split()))))
    early_answer = _think(lambda env, h: f"so the answer is {_gold(env, h)}")
    with_subject = _think(lambda env, h: f"{hop(env, 0, 'entity')} was born in "
                                         f"{hop(env, 0, 'value')}")
    junk = lambda env, h, i: "<think>hmm ok</think>\n<search> zzz qqq </search>"  # noqa: E731
    stale = _think(lambda env, h: f"so it was {hop(env, 0, 'value')}")

    def answer_naming_subject(env, history, info):
        return (f"<think>{hop(env, 1, 'entity')} lies in {_gold(env, history)}</think>\n"
                f"<answer> {_gold(env, history)} </answer>")
    def answer_naming_the_chain(env, history, info):
        return (f"<think>{hop(env, 0, 'entity')} was born in {hop(env, 1, 'entity')}, which "
                f"lies in {_gold(env, history)}</think>\n<answer> {_gold(env, history)} </answer>")
    def year_of_first_hop(env, history):  # the gold passage's other fact: when, not where
        passage = env.documents[env.task["chain"][0]["doc_id"]]
        return f"so it was {re.findall(r'[0-9]{4}', passage)[0]}"

    def gold_then_wrong(env, history, info):
        return (f"<think>so it lies in {_gold(env, history)}</think>\n"
                f"<answer> {_wrong(env, history)} </answer>")

    def two_thoughts(env, history, info):
        return (f"<think>so it was {hop(env, 0, 'value')}</think>\n<think>or "
                f"{_gold(env, history)}</think>\n<search> {hop(env, 1, 'query')} </search>")
    def ask_question(env, history, info):
        return f"<think>Let me look.</think>\n<search> {_question(env).rstrip('?')} </search>"

    def both_years(env, history, info):
        years = " and ".join(h["value"] for h in env.task["chain"])
        return f"<think>founded in {years}</think>\n<search> {hop(env, 0, 'entity')} </search>"

    def answer_with_its_year(env, history, info):
        winner = next(h for h in env.task["chain"] if h["entity"] == _gold(env, history))
        return (f"<think>{winner['entity']} was founded in {winner['value']}</think>\n"
                f"<answer> {_gold(env, history)} </answer>")
    return [
        _case("think_stating_two_found_facts_at_once_earns_nothing", (ask_question, both_years),
              {"component.judge_think": (0, 0)}, seed=BOTH_FOUND,
              why="one claim per thought: two values stated together commit to neither"),
        _case("comparison_think_stating_the_answers_year_earns",
              (ask_question, answer_with_its_year), {"component.judge_think": (1, 1)},
              seed=BOTH_FOUND, why="the year of the option it answers is what decides it"),
        _case("think_stating_another_fact_of_the_gold_passage_earns_nothing",
              (first, _think(year_of_first_hop)), {"component.judge_think": (0, 0)},
              why="the passage states the year too, but the question walks through the city"),
        _case("think_stating_the_gold_before_a_wrong_answer_earns_nothing",
              (first, _search(1), gold_then_wrong), {"component.judge_think": (0, 0)},
              why="the thought does not support the answer given: stated, then dropped"),
        _case("a_second_think_naming_another_candidate_is_read",
              (first, two_thoughts), {"component.judge_think": (0, 0)},
              why="every thought before the call is the step's thinking: two claims"),
        _case("think_retelling_the_chain_from_the_question_earns",
              (first, _search(1), answer_naming_the_chain), {"component.judge_think": (1, 1)},
              why="the question's person and the known city are context; the country is the "
                  "one new claim, and the passage just found states it"),
        _case("think_salad_with_nonsense_earns_nothing", (first, salad_nonsense),
              {"component.judge_think": (0, 0)},
              why="sorted passage words between nonsense tokens state no fact"),
        _case("think_naming_the_answer_before_its_passage_earns_nothing", (first, early_answer),
              {"component.judge_think": (0, 0)},
              why="the passage just found does not support it: unverifiable"),
        _case("think_restating_the_question_entity_with_the_fact_earns", (first, with_subject),
              {"component.judge_think": (1, 1)},
              why="the one new claim is the bridging city the passage states"),
        _case("think_stating_an_old_fact_after_a_fruitless_search_earns_nothing",
              (first, junk, stale), {"component.judge_think": (0, 0)},
              why="progress is what the previous search found; this one found no gold"),
        _case("think_naming_the_passage_subject_and_the_answer_earns",
              (first, _search(1), answer_naming_subject), {"component.judge_think": (1, 1)},
              why="the city is what the passage is about; the country is the one new claim"),
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
        _case("a_search_finding_only_known_gold_pays_nothing",
              (first, lambda env, h, i: f"<think>more on them</think>\n"
                                        f"<search> {env.task['chain'][0]['entity']} </search>"),
              {"component.judge_query": (1, 1)},
              why="new passages, but the gold among them was found before: 0 after the +1"),
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
        _case("a_word_every_organisation_shares_is_not_partly_right",
              (_search(0), _search(1), _answer(lambda e, h: _gold(e, h).split()[-1])),
              {"component.judge_answer": (-1, -1)}, seed=ORG,
              why="'Guild' names no entity: overlap on it is not naming the gold"),
        _case("a_part_of_the_gold_organisation_name_is_partly_right",
              (_search(0), _search(1), _answer(lambda e, h: _gold(e, h).split()[0])),
              {"component.judge_answer": (0, 0)}, seed=ORG),
        _case("a_single_wrong_answer_is_no_hedge", (*both, _answer(_wrong)),
              {"component.judge_answer": (-1, -1), "component.judge_hedge": (0, 0)}),
        _case("a_verbose_single_answer_is_no_hedge",
              (*both, _answer(lambda e, h: f"{_gold(e, h)} (the country found)")),
              {"component.judge_hedge": (0, 0)}, why="judged by the entities named, not length"),
        _case("two_full_names_glued_are_a_hedge",
              (*both, _answer(lambda e, h: f"{_wrong(e, h)} {_gold(e, h)}")),
              {"component.judge_hedge": (-0.5, -0.5)}),
        _case("a_name_part_glued_to_the_gold_is_a_hedge",
              (*both, _answer(lambda e, h: f"{_gold(e, h)} "
                                           f"{e.task['chain'][0]['entity'].split()[0]}")),
              {"component.judge_hedge": (-0.5, -0.5)},
              why="'Bandmest Braethkoul': a lone part of a world name names that entity"),
        _case("two_years_glued_are_a_hedge",
              (_search(0), _answer(lambda e, h: f"{_gold(e, h)} {int(_gold(e, h)) + 1000}")),
              {"component.judge_hedge": (-0.5, -0.5)}, seed=YEAR,
              why="'1865 1878': each number is a candidate, fact of the world or not"),
        _case("a_list_a_lenient_judge_calls_partial_still_pays_minus_one",
              (*both, _answer(_listing)),
              {"component.judge_answer": (-1, -1), "component.judge_hedge": (-0.5, -0.5)},
              kwargs={**SLATE, "judge": LenientJudge()},
              why="the hedge is verified by the environment, over any model judge"),
        *[_case(f"gold_and_an_unknown_name_split_by_{name}_is_a_hedge",
                (_answer(lambda e, h, d=delim: f"{_gold(e, h)}{d}{UNKNOWN}"),),
                {"component.judge_hedge": (-0.5, -0.5)},
                why="delimited parts are candidates even when the world knows none of them")
          for name, delim in (("comma", ", "), ("semicolon", "; "), ("slash", " / "),
                              ("bar", " | "), ("ampersand", " & "), ("newline", "\n"),
                              ("or", " or "), ("and", " and "))],
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
        return GraderCase(name, actions, {}, seed=BRIDGE, env_kwargs=dict(SPLIT))
    return [Ordering("the_gold_answer_beats_a_wrong_one_as_checked",
                     checked("gold", (_search(0), _answer(_gold))),
                     checked("wrong", (_search(0), _answer(_wrong))),
                     margin=0.5)]


def fixtures() -> list[GraderCase | Ordering]:
    return [*_thinking_cases(), *_search_cases(), *_answer_cases(), *_episode_cases(),
            *_as_checked()]

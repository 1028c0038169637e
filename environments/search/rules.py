"""The rules of Search-v0's offline SLATE grader (`judges.RuleJudge`, `judges.slate_step_reward`,
`candidates`), as one table read at judgement time so `envgym check --mutants` can perturb
each; `grader_fixtures.py` pins every one."""

from __future__ import annotations

from envgym.rules import Rule, RuleTable

__all__ = ["RULES", "tables"]

RULES = RuleTable("search.slate", [
    Rule("think_empty_costs", why="an empty thought scores -1"),
    Rule("think_needs_fresh_gold", why="a thought earns only right after a search newly "
                                       "retrieved a gold passage: it may state what was found"),
    Rule("think_max_claims", 1, why="a thought states one new referent; naming several is a "
                                    "hedge or a salad, and term overlap never pays"),
    Rule("think_claim_supported", why="the one referent it states is what a newly retrieved "
                                      "gold passage says"),
    Rule("think_claim_on_chain", why="with a hop chain, the claim is the hop the question walks "
                                     "through (bridge or answer), not another fact of the passage"),
    Rule("think_supports_answer", why="a thought before an answer states what the answer names "
                                      "(or, a comparison, a hop value of the entity it names)"),
    Rule("think_question_names_free", why="restating the question's own names is no claim"),
    Rule("think_subject_free", why="naming the subject of the passage just found is no claim"),
    Rule("redundant_think_cap", why="a thought before a search that adds nothing made no "
                                    "progress: at most 0"),
    Rule("query_adds_nothing_costs", why="a search retrieving only passages seen before: -1"),
    Rule("query_needs_gold", why="a search that retrieves no gold passage: -1"),
    Rule("query_seen_gold_zero", why="a search whose gold passages were all seen before: 0"),
    Rule("answer_partial_zero", why="one candidate sharing tokens with the gold: 0, not -1"),
    Rule("answer_partial_names_gold", why="partial means naming the gold entity alone, not "
                                          "sharing a word such as 'Institute' with it"),
    Rule("hedge_min_candidates", 2, why="an answer naming this many candidates is a hedge"),
    Rule("hedge_penalty", -0.5, step=0.25, why="a hedge is worth less than one wrong answer"),
    Rule("hedge_caps_answer", why="a hedge's answer score is at most -1, whatever the judge"),
    Rule("hedge_name_parts", why="a lone part of a world name names that entity (glued "
                                 "candidates: 'Bandmest Braethkoul')"),
    Rule("hedge_numbers", why="every number is a candidate of its own ('1865 1878')"),
    Rule("hedge_delimiters", (r",", r";", r"/", r"\|", r"&", r"\n", r"\bor\b", r"\band\b"),
         why="delimited parts count as candidates even when the vocabulary knows none of them"),
])


def tables() -> list[RuleTable]:
    return [RULES]

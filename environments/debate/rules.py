"""The rules of the debate's reward (`grading.py`), as one table read at judgement time so
`envgym check --mutants` can perturb each; `grader_fixtures.py` pins every rule."""

from __future__ import annotations

from envgym.rules import Rule, RuleTable

__all__ = ["RULES", "tables"]

RULES = RuleTable("debate.grading", [
    Rule("initial_needs_right", why="`initial` pays only a right phase-0 answer"),
    Rule("shared_needs_right_final", why="a stated answer earns its share only if the agent "
                                         "ends right"),
    Rule("shared_tied_to_final", why="the share counts only stated answers equal to the final "
                                     "one: telling a partner something else forfeits it"),
    Rule("team_share_of_right", why="`team` pays the share of agents that end right: no reward "
                                    "grows when a peer ends wrong, and agreeing on a guess in "
                                    "advance earns nothing over answering independently"),
    Rule("team_needs_own_answer", why="an agent with no final answer takes no `team` share"),
    Rule("team_needs_peers", why="a lone agent has no team"),
    Rule("persuaded_penalty", why="a right initial answer turned wrong costs `persuaded`"),
    Rule("unit_has_no_digit", why="a trailing `\\text{...}` is dropped as a unit only if it "
                                  "names no number: `42\\text{ or 41}` is a hedge, not 42"),
    Rule("prefix_is_variable", why="`x = 5` reads as 5, but `41 = 42` names two candidates"),
])


def tables() -> list[RuleTable]:
    return [RULES]

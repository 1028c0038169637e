"""The debate's reward rules, one function each, each switch a row of `rules.RULES` read at
judgement time (the grader fixtures pin every one: `envgym check --mutants`).

Four properties hold by construction; `grader_fixtures.py` and tests/debate/test_hacks.py
check them with attacks:

1. **What an agent says is tied to what it answers.** Each answer an agent states in the
   sharing and analysis phases earns `shared` only if it is the answer the agent ends with
   and that answer is right. Telling a partner something else (deceiving it, or sharing an
   answer one does not hold) forfeits that share, whatever the partner then does.
2. **No reward grows when a peer ends wrong.** An agent's components are non-decreasing in
   every peer's final correctness: `team` pays the share of agents that end right, and no
   term pays for a peer's failure (the former competitive bonus did, so misleading a
   competitor paid).
4. **Agreement alone pays nothing.** `team` is linear in each agent's correctness, so two
   agents that agree on a guess in advance earn what two independent agents of the same
   accuracy earn (an all-right bonus paid the agreement: issue 36's collusion attack).
3. **The solo skill pays, and the mode pays nothing.** A right phase-0 answer earns
   `initial` (ILR trains the skill each model uses alone at inference). The mode chosen from
   the IRT abilities changes only the prompts: every component is computed the same way in
   cooperative and competitive episodes, so lowering one's estimated ability (answering
   phase 0 wrong on purpose) only loses `initial`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from envgym.environments.debate.answers import normalize_answer
from envgym.environments.debate.rules import RULES

__all__ = ["final_components", "initial_component", "persuaded_component", "shared_component",
           "team_component"]


def initial_component(weights: Mapping[str, float], right: bool) -> float:
    """`initial` for a right phase-0 answer."""
    return float(weights["initial"]) if right or not RULES.on("initial_needs_right") else 0.0


def shared_component(weights: Mapping[str, float], stated: Sequence[str], final: str | None,
                     final_right: bool) -> float:
    """`shared` × the share of the agent's stated answers that equal its (right) final one."""
    if not stated or final is None or (not final_right and RULES.on("shared_needs_right_final")):
        return 0.0
    if not RULES.on("shared_tied_to_final"):
        return float(weights["shared"])
    held = normalize_answer(final)
    return float(weights["shared"]) * sum(normalize_answer(s) == held for s in stated) / len(stated)


def team_component(weights: Mapping[str, float], last: Mapping[str, bool],
                   final: str | None = "") -> float:
    """`team` × the share of agents that end right: helping a peer pays, misleading one
    costs, and agreement by itself pays nothing.

    The share is linear in each agent's correctness, so its expected value depends only on
    each agent's accuracy, never on whether their answers are correlated. An all-or-nothing
    bonus paid consensus instead: two agents that agree in advance on one guess are both
    right together far more often than two independent ones at the same accuracy (issue 36's
    collusion attack). An agent that gives no final answer takes no share (a format failure
    does not ride on its peers), and a lone agent has no team."""
    peers = len(last) > 1 or not RULES.on("team_needs_peers")
    if not peers or (not final and RULES.on("team_needs_own_answer")):
        return 0.0
    share = sum(last.values()) / len(last) if RULES.on("team_share_of_right") else 1.0
    return float(weights["team"]) * share


def persuaded_component(weights: Mapping[str, float], first: bool, last: bool) -> float:
    """The (negative) `persuaded` penalty for a right initial answer turned wrong."""
    return float(weights["persuaded"]) if first and not last and RULES.on("persuaded_penalty") \
        else 0.0


def final_components(agent: str, weights: Mapping[str, float], first: Mapping[str, bool],
                     last: Mapping[str, bool], stated: Sequence[str], final: str | None
                     ) -> dict[str, float]:
    """Every end-of-episode component of `agent` (the same in every mode: property 3)."""
    return {"correct": float(weights["correct"]) if last[agent] else 0.0,
            "shared": shared_component(weights, stated, final, last[agent]),
            "team": team_component(weights, last, final),
            "persuaded": persuaded_component(weights, first[agent], last[agent])}

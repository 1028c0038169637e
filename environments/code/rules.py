"""The rules of CodeRefine-v0's grader (the progress shaping and the tool penalty in `env.py`),
as one table read at judgement time so `envgym check --mutants` can perturb each; the hidden
tests themselves are judged by `envgym.sandbox` (which of a dataset's tests are hidden is
decided in `loaders.py`). `grader_fixtures.py` pins every rule."""

from __future__ import annotations

from envgym.rules import Rule, RuleTable

__all__ = ["RULES", "tables"]

RULES = RuleTable("code.refine", [
    Rule("progress_capped_by_hidden", why="a program's potential is its public pass fraction "
                                          "capped by what submitting it would earn: replaying "
                                          "public outputs earns no progress"),
    Rule("settle_on_submit", why="a submission settles the shaping down to its own score"),
    Rule("settle_unsubmitted", why="an episode that ends unsubmitted gives the shaping back"),
    Rule("hidden_excludes_shown", why="a hidden test whose input is a shown example verifies "
                                      "nothing (a replay passes it): it is not judged, and a "
                                      "problem left without hidden tests is not loaded"),
    Rule("tool_penalty", -0.1, step=0.05, why="a command without a program, or an oversized "
                                              "custom input, costs"),
])


def tables() -> list[RuleTable]:
    return [RULES]

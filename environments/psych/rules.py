"""The rules of Consult-v0's offline process judge (`judge.RuleJudge`), as one table read at
judgement time so `envgym check --mutants` can perturb each; `grader_fixtures.py` pins every
rule. Only the decision criterion is verifiable from the environment's data (the intents a
question targets, the missing checks, the label the confirmed evidence meets); the symptom and
differential criteria judge reasoning, which a rule cannot read, so they pay nothing offline
and are graded by the HTTP judge when one is configured."""

from __future__ import annotations

from envgym.rules import Rule, RuleTable

__all__ = ["RULES", "tables"]

RULES = RuleTable("psych.process", [
    Rule("question_targets_missing", why="a question aimed at a missing check scores 2"),
    Rule("question_related", why="a question the intent matcher places in any field scores 1"),
    Rule("diagnosis_needs_evidence", why="a diagnosis before the consultation heard anything "
                                         "beyond the opening scores 0: an empty evidence state "
                                         "'meets' a label without verifying it"),
    Rule("diagnosis_supported", why="a diagnosis equal to the label the confirmed evidence "
                                    "meets scores 2, whoever leads the posterior"),
    Rule("diagnosis_active", why="another still-active hypothesis scores 1; an eliminated 0"),
])


def tables() -> list[RuleTable]:
    return [RULES]

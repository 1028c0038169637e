"""TimeSeries-v0's grader rules as one table, read by the environment at judgement time.

Each entry is a rule of the reward that an attack would exploit if it were deleted or moved
(`envgym check envgym/TimeSeries-v0 --mutants` switches each off and moves each threshold;
`grader_fixtures.py` pins every one). Values are ARTIST's where ARTIST fixes them (methods
reference §5.2); the others say why they exist.
"""

from __future__ import annotations

from envgym.rules import Rule, RuleTable

__all__ = ["RULES", "tables"]

RULES = RuleTable("timeseries.grader", [
    Rule("round_cost", 0.1, "ARTIST charges 0.1 per zoom round; paid on the zoom's own step",
         step=0.05),
    Rule("span_divisor", 4, "one zoom covers at most len/divisor points (unless max_zoom_span), "
                            "so a whole-series zoom cannot replace reading the evidence"),
    Rule("downsample", None, "a zoom shows at most zoom_points values, mean-pooled: a wide zoom "
                             "is a coarse view"),
    Rule("first_zoom", None, "round 1 must be a zoom (with require_first_zoom): no answering "
                             "from the sketch"),
    Rule("accuracy_weight", 3.0, "R_r's accuracy term 3·acc", step=1.0),
    Rule("consistency_weight", 3.0, "R_c's consistency term 3·c", step=1.0),
    Rule("reasoner_violation", 0.5, "f_r loses this much per format violation", step=0.25),
    Rule("junk_margin", 0.1, "a malformed turn costs this much more than the costliest valid "
                             "zoom, so a valid zoom always out-earns a junk turn (issue 37)",
         step=0.05),
    Rule("informative_only", None, "the exploration bonus counts only zooms that show evidence "
                                   "points the episode has not seen (issue 36)"),
    Rule("bonus_min_zooms", 2, "ARTIST pays the bonus for 2-4 (informative) segments"),
    Rule("bonus_max_zooms", 4, "upper end of ARTIST's 2-4 segments"),
    Rule("bonus_decay_steps", 300, "the bonus decays linearly to 0 by this training step",
         step=100),
    Rule("override", -2.0, "ARTIST's R_c when the controller fails (an invalid round under the "
                           "artist rules, or no valid first segment)", step=1.0),
    Rule("override_replaces", None, "the override *is* R_c: the controller's earlier round, "
                                    "point and format charges are refunded (issue 35 item 4)"),
    Rule("malformed_answer", -1.0, "ARTIST's R_r for a missing or malformed answer (artist "
                                   "rules); it ends the episode", step=0.5),
])


def tables() -> list[RuleTable]:
    """What `envgym check --mutants` perturbs (registered as `grader_rules`)."""
    return [RULES]

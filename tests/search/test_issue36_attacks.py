"""Issue 36's attacks on Search-v0's SLATE rule judge, under the SLATE config's arguments.

Before the redesign (word-overlap thinking, a hedge rule by length), on seeds 0-199:
a thought of the top passage's words, sorted and interleaved with nonsense, scored 1.425
against 1.050 for a thought that states the chosen fact at identical answers (EM 0.325 both);
two candidates glued into one answer, thinking that salad, scored 0.740 against the
heuristic's 0.705 (EM 0.115 against 0.325). Both must lose now.
"""

from pathlib import Path

import pytest

from envgym.hacks import play
from envgym.registration import make

ENV = "envgym/Search-v0"
SLATE_CONFIG = Path(__file__).parents[2] / "agents" / "configs" / "search_qwen15b_slate.toml"
EPISODES = 200


@pytest.fixture(scope="module")
def scores():
    from envgym.checker import config_variants

    kwargs = config_variants(SLATE_CONFIG, ENV)[0].kwargs
    assert kwargs.get("judge") == "rule" and kwargs.get("judge_em") is False
    env = make(ENV, **kwargs)
    try:
        return {p: play(ENV, env, p, EPISODES, 0, kwargs)
                for p in ("heuristic", "heuristic_stated", "hack_salad_think",
                          "hack_glued_candidates")}
    finally:
        env.close()


def test_a_salad_thought_loses_to_a_stated_fact_at_identical_answers(scores):
    salad, stated = scores["hack_salad_think"], scores["heuristic_stated"]
    assert salad["metrics"]["em"] == stated["metrics"]["em"] > 0.2
    assert salad["mean_reward"] < stated["mean_reward"] - 0.2  # was 1.425 against 1.050


def test_a_stated_fact_earns_over_a_lazy_thought(scores):
    """The thinking reward still pays: a verifiable statement is worth more than none."""
    assert scores["heuristic_stated"]["mean_reward"] > scores["heuristic"]["mean_reward"] + 0.2


def test_glued_candidates_lose_to_the_heuristic(scores):
    glued, honest = scores["hack_glued_candidates"], scores["heuristic"]
    assert glued["metrics"]["em"] < honest["metrics"]["em"]
    assert glued["mean_reward"] < honest["mean_reward"] - 0.5  # was 0.740 against 0.705

"""Issue 36, second round: attacks written from outside the rule judge, under the SLATE
config's training arguments, 200 tasks (bench/issue36_attacks.py, pre-registered in
bench/issue36_attacks.md).

Before the fixes, against `heuristic_stated` (1.045, EM 0.325):
* a thought stating another fact of the passage about the question's entity: 1.345, EM 0.325;
* a thought stating a fact, taking it back, and another answer: 1.160, EM 0.195;
* a thought naming the top passage's first fact, gold or not: 1.425, EM 0.325;
* several thoughts per turn, each naming another candidate: 1.045 (only the first was read).
And against `heuristic` (0.705, EM 0.325): the organisation kinds as the answer ("Institute
Company Guild ..."), paid as partly right on every organisation gold: 0.675, EM 0.250.
"""

from pathlib import Path

import pytest

from envgym.environments.search.candidates import world_vocabulary
from envgym.environments.search.data import default_world
from envgym.environments.search.judges import RuleJudge
from envgym.hacks import play
from envgym.registration import make

ENV = "envgym/Search-v0"
SLATE_CONFIG = Path(__file__).parents[2] / "agents" / "configs" / "search_qwen15b_slate.toml"
EPISODES = 200
ATTACKS = ("hack_think_sibling_fact", "hack_think_retract", "hack_think_any_passage",
           "hack_multi_think", "hack_kind_words")


@pytest.fixture(scope="module")
def scores():
    from envgym.checker import config_variants

    kwargs = config_variants(SLATE_CONFIG, ENV)[0].kwargs
    env = make(ENV, **kwargs)
    try:
        return {p: play(ENV, env, p, EPISODES, 0, kwargs)
                for p in ("heuristic", "heuristic_stated", *ATTACKS)}
    finally:
        env.close()


@pytest.mark.parametrize("hack", ATTACKS[:3])
def test_a_thought_that_is_not_the_hop_or_the_answer_loses(scores, hack):
    got, honest = scores[hack], scores["heuristic_stated"]
    assert got["metrics"]["em"] <= honest["metrics"]["em"]
    assert got["mean_reward"] < honest["mean_reward"] - 0.1, got["mean_reward"]


def test_several_thoughts_are_read_together(scores):
    got, honest = scores["hack_multi_think"], scores["heuristic_stated"]
    assert got["metrics"]["em"] == honest["metrics"]["em"]
    assert got["mean_reward"] < honest["mean_reward"] - 0.1  # was equal: only one was read


def test_organisation_kinds_are_not_partly_right(scores):
    got, honest = scores["hack_kind_words"], scores["heuristic"]
    assert got["metrics"]["em"] < honest["metrics"]["em"]
    assert got["mean_reward"] < honest["mean_reward"] - 0.1  # was 0.675 against 0.705


def test_partial_credit_needs_the_gold_entity_named():
    vocab = world_vocabulary(default_world(0).entities)
    org = next(n for n, e in default_world(0).entities.items() if e["type"] == "org")
    item = {"golden_answers": [org], "vocabulary": vocab}
    judge = RuleJudge()
    assert judge.judge("answer", [{**item, "answer": org.split()[-1]}]) == [-1.0]
    assert judge.judge("answer", [{**item, "answer": org.split()[0]}]) == [0.0]

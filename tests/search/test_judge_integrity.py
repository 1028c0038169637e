"""SLATE's process reward under attack (issues 24 and 36): every shipped search config's
arguments, the never-right attack, and judgements that pay only what the environment's data
verifies. That every judge rule is pinned by a fixture is `envgym check --mutants`
(tests/core/test_mutants.py)."""

from pathlib import Path

import pytest

from envgym.environments.search.candidates import answer_candidates
from envgym.environments.search.judges import RuleJudge, slate_step_reward
from envgym.hacks import play, run_hacks
from envgym.registration import make

ENV = "envgym/Search-v0"
CONFIGS = sorted((Path(__file__).parents[2] / "agents" / "configs").glob("search_*.toml"))
SLATE = {"judge": "rule", "judge_em": False}


def _search_kwargs(path: Path) -> list[dict]:
    """The Search-v0 constructor kwargs a config trains and evaluates with."""
    from envgym.agents.config import load_config
    from envgym.agents.structure import env_kwargs

    cfg = load_config(path)
    out = []
    for env in cfg.envs:
        if env.id != ENV:
            continue
        kwargs = env_kwargs(env, cfg)
        if cfg.rollout.branch_k:  # a SLATE tree: budget B, then the forced answer
            kwargs.update(max_turns=cfg.rollout.slate_budget + 1,
                          slate_budget=cfg.rollout.slate_budget)
        out += [kwargs, {**kwargs, **env.eval_kwargs}] if env.eval_kwargs else [kwargs]
    return out


ARGS = [kw for path in CONFIGS for kw in _search_kwargs(path)] + [{}, SLATE]


def test_every_search_config_is_covered():
    names = {p.name for p in CONFIGS}
    assert {"search_qwen15b_slate.toml", "search_qwen05b.toml"} <= names
    assert any(kw.get("judge") == "rule" and kw.get("judge_em") is False for kw in ARGS)


@pytest.mark.parametrize("kwargs", ARGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items())
                         or "defaults")
def test_every_hack_stays_under_its_ceiling(kwargs):
    results = run_hacks(ENV, episodes=100, env_kwargs=kwargs)
    assert {"hack_copy_think", "hack_list_think", "hack_search_spam", "hack_stuff_answer",
            "hack_salad_think", "hack_glued_candidates"} <= {r.hack for r in results}
    assert all(r.ok for r in results), [r.render() for r in results if not r.ok]


def test_under_the_slate_config_the_never_right_attack_loses_by_far():
    kwargs = _search_kwargs(next(p for p in CONFIGS if "slate" in p.name))[0]
    env = make(ENV, **kwargs)
    got = {p: play(ENV, env, p, 200, 0, kwargs)
           for p in ("heuristic", "hack_search_spam", "hack_stuff_answer", "hack_copy_think")}
    env.close()
    honest = got["heuristic"]["mean_reward"]
    assert honest > 0.5 and got["heuristic"]["success_rate"] > 0.2
    assert got["hack_search_spam"]["success_rate"] == 0.0
    assert got["hack_search_spam"]["mean_reward"] < honest - 2.0  # 3.66 before the fix
    assert got["hack_stuff_answer"]["mean_reward"] < honest - 1.0  # 0.715 vs 0.705 before
    assert got["hack_copy_think"]["mean_reward"] == pytest.approx(honest)  # copying earns 0


def _item(**kw):
    base = {"question": "Where was Trisk Havel born?", "golden_answers": ["Velmora"],
            "gold_doc_ids": ["1"], "documents": {}, "seen_ids": [], "previous_queries": [],
            "last_new_ids": []}
    return {**base, **kw}


def test_thinking_is_judged_on_what_it_adds():
    docs = {"1": "Trisk Havel\nTrisk Havel was born in Velmora in 1901.",
            "2": "Orrin Pell\nOrrin Pell was born in Dastow in 1877."}
    after = {"documents": docs, "last_new_ids": ["1", "2"], "seen_ids": ["1", "2"]}
    score = lambda think, **kw: RuleJudge().judge("thinking", [_item(thinking=think, **kw)])[0]
    assert score("Where was Trisk Havel born?") == 0.0  # the question, pasted
    assert score("Trisk Havel was born in Velmora in 1901.", **after) == 0.0  # a quote
    assert score("so it must be Velmora, I think", **after) == 1.0  # the new fact, stated
    assert score("so it must be Velmora, I think") == 0.0  # not yet retrieved: unfaithful
    assert score("Velmora Dastow 1901 1877", **after) == 0.0  # a list of the context
    assert score("maybe Dastow or Orrin Pell, not sure", **after) == 0.0  # off the evidence
    assert score("1901 and Velmora", **after) == 0.0  # two claims: a hedge
    assert score("", **after) == -1.0


def test_datasets_without_gold_ids_use_passages_that_state_the_answer():
    docs = {"7": "Velmora\nTrisk Havel was born in Velmora."}
    item = _item(gold_doc_ids=[], query="Trisk Havel birthplace", retrieved_ids=["7"],
                 retrieved_docs=docs)
    assert RuleJudge().judge("query", [item]) == [1.0]
    unrelated = {**item, "retrieved_docs": {"7": "Dastow\nnothing here"}}
    assert RuleJudge().judge("query", [unrelated]) == [-1.0]


def test_a_search_that_adds_nothing_costs_under_any_judge():
    class Generous:  # an LLM judge that likes everything
        def judge(self, rubric, items):
            return [1.0] * len(items)
    seen = _item(query="Velmora", retrieved_ids=["1"], seen_ids=["1"], previous_queries=["x"])
    out = slate_step_reward(Generous(), seen, "search", 2, 4)
    assert out == {"judge_think": 0.0, "judge_query": -1.0}
    fresh = _item(query="Velmora", retrieved_ids=["9"], seen_ids=["1"])
    assert sum(slate_step_reward(Generous(), fresh, "search", 2, 4).values()) == 2.0


def _world():
    from envgym.environments.search.env import _vocabulary

    return _vocabulary(0)


@pytest.mark.parametrize("answer,n", [("Quethprarn", 1), ("quethprarn city", 1),
                                      ("Quethprarn (the city)", 1), ("Starmynd", 1),
                                      ("Quethprarn, Zyxthyrkia", 2), ("Quethprarn or Qwz", 2),
                                      ("Quethprarn Zyxthyrkia", 2), ("Quethprarn Starmynd", 2),
                                      ("1865 1878", 2), ("Quethprarn; Zyxthyrkia; 1878", 3)])
def test_answer_candidates_are_the_world_referents_named(answer, n):
    """Separated or glued, by the world's entity set: never by the answer's length."""
    assert answer_candidates(answer, ["Quethprarn"], _world()) == n


def test_a_list_is_worth_less_than_a_single_wrong_answer_under_any_judge():
    class Lenient:  # calls any list holding the gold "partially correct"
        def judge(self, rubric, items):
            return [0.0] * len(items)
    listed = slate_step_reward(Lenient(), _item(answer="Dastow, Velmora, Brenvia"), "answer", 2, 4)
    wrong = slate_step_reward(RuleJudge(), _item(answer="Dastow", thinking="x"), "answer", 2, 4)
    assert listed["judge_hedge"] == -0.5 and listed["judge_answer"] == -1.0
    assert sum(listed.values()) - listed["judge_think"] < sum(wrong.values()) - wrong["judge_think"]

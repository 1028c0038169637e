import pytest

import envgym
from envgym.environments.search import policies
from envgym.environments.search.env import SearchEnv
from envgym.environments.search.formatting import SEARCH_R1_INVALID
from envgym.environments.search.judges import RuleJudge
from envgym.environments.search.retrievers import Document, Hit
from envgym.errors import InvalidConfig


@pytest.fixture(scope="module")
def env():
    return envgym.make("envgym/Search-v0")


def run(env, policy_cls, episodes, **kw):
    outcomes = []
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        messages, policy = list(obs), policy_cls(seed=seed)
        while True:
            action = policy.act(env, messages)
            obs, reward, term, trunc, info = env.step(action)
            assert reward == pytest.approx(sum(info["reward_components"].values()))
            messages += [{"role": "assistant", "content": action}, *obs]
            if term or trunc:
                outcomes.append(info["outcome"])
                break
    return env.summarize(outcomes)


def test_baselines_order_oracle_heuristic_random(env):
    oracle = run(env, policies.OraclePolicy, 200)
    heuristic = run(env, policies.HeuristicPolicy, 100)
    random = run(env, policies.RandomPolicy, 100)
    assert oracle["em"] >= 0.95 and oracle["gold_recall"] > 0.95
    assert 0.1 < heuristic["em"] < 0.8
    assert random["em"] <= 0.05
    assert set(oracle) >= {"em", "f1", "n_searches", "gold_recall"}


def test_search_step_protocol_span_and_state_key(env):
    obs, info = env.reset(seed=3)
    assert obs[0]["content"].startswith("Answer the given question.") and "Question: " in obs[0]["content"]
    key0 = info["state_key"]
    action = "<think>look</think>\n<search>  Glass founded </search> trailing"
    obs, reward, term, trunc, info = env.step(action)
    (span,) = info["spans"]
    assert action[span["start"]:span["end"]] == "Glass founded" and span["kind"] == "query"
    assert obs[0]["role"] == "continuation"
    text = obs[0]["content"]
    assert text.startswith("\n\n<information>Doc 1(Title: \"") and text.endswith("</information>\n\n")
    assert text.count("Doc ") == 3 and len(info["retrieved_ids"]) == 3
    assert info["state_key"] != key0 and reward == 0.0 and not (term or trunc)


def test_invalid_action_gets_search_r1_message_and_penalty(env):
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.step("I think the answer is Paris")
    assert obs[0]["content"].strip() == SEARCH_R1_INVALID
    assert info["reward_components"] == {"format": -0.1} and info["parse_error"]
    obs, reward, *_ = env.step("<search>   </search>")
    assert reward == -0.1


def test_answer_scores_normalised_em_and_first_closing_tag_wins(env):
    env.reset(seed=5)
    gold = env.task["golden_answers"][0]
    _, r, term, _, info = env.step(f"<think>x</think><answer> THE {gold.upper()}. </answer><search>q</search>")
    assert term and r == 1.0 and info["outcome"]["success"] and info["outcome"]["em"] == 1.0


def test_truncation_after_budget_reports_metrics(env):
    env.reset(seed=1)
    for _ in range(3):
        env.step("<think>a</think><search>nothing useful</search>")
    _, _, term, trunc, info = env.step("<think>a</think><search>still nothing</search>")
    assert trunc and not term
    assert info["outcome"]["answered"] is False and info["outcome"]["n_searches"] == 4


def test_f1_and_format_aware_rewards():
    env = SearchEnv(reward="f1")
    env.reset(seed=0)
    env.task = {**env.task, "golden_answers": ["Glass Guild Works"]}
    _, r, *_ = env.step("<think>t</think><answer>Glass Guild</answer>")
    assert r == pytest.approx(2 * (1 * 2 / 3) / (1 + 2 / 3))  # P=1, R=2/3
    env = SearchEnv(reward="em_format")
    env.reset(seed=0)
    _, r, *_ = env.step("<answer>wrong</answer>")  # no <think>: invalid format, wrong answer
    assert r == pytest.approx(0.1)


def test_em_format_is_search_r1s_definition():
    """1 / 0.8 / 0.3 / 0.2 / 0.1, with Search-R1's sequence check and retrieval rule."""
    class Unhelpful:  # retrieves the same gold-free passage for any query
        kind = "stub"

        def search(self, queries, topk):
            return [[Hit(Document.make("x", "Nothing", "No answer here."), 1.0)] for _ in queries]

    def run(*actions):
        env = SearchEnv(reward="em_format", max_turns=4, retriever=Unhelpful())
        env.reset(seed=0)
        for a in actions:
            _, r, *_ = env.step(a.format(gold=env.task["golden_answers"][0],
                                         q=env.task["chain"][0]["query"]))
        return r
    assert run("<think>t</think><answer>{gold}</answer>") == 1.0
    assert run("<answer>{gold}</answer>") == pytest.approx(0.8)  # no <think>
    assert run("<think>t</think><answer>nope</answer>") == pytest.approx(0.2)
    assert run("<answer>nope</answer>") == pytest.approx(0.1)
    # the gold only in the model's own query is not "retrieval correct"
    assert run("<think>t</think><search>{gold} zzz</search>",
               "<think>t</think><answer>nope</answer>") == pytest.approx(0.2)
    # text outside tags breaks the sequence, as in Search-R1
    assert run("<think>t</think>junk<answer>nope</answer>") == pytest.approx(0.1)


def test_em_format_pays_0_3_only_for_gold_in_retrieved_information():
    env = SearchEnv(reward="em_format", max_turns=4)
    env.reset(seed=0)
    gold = env.task["golden_answers"][0]
    for hop in env.task["chain"]:
        env.step(f"<think>t</think><search>{hop['query']}</search>")
    assert any(gold.lower() in block.lower() for block in env.information)
    _, r, *_ = env.step("<think>t</think><answer>nope</answer>")
    assert r == pytest.approx(0.3)


def test_information_block_has_no_trailing_newline_inside(env):
    """Search-R1 strips the passages string: `…text</information>`, not `…text\n</information>`."""
    env.reset(seed=0)
    obs, *_ = env.step("<think>t</think><search>city located</search>")
    text = obs[0]["content"]
    assert "\n</information>" not in text and text.endswith("</information>\n\n")


def test_ig_protocol_uses_documents_tags():
    env = SearchEnv(protocol="ig")
    obs, _ = env.reset(seed=0)
    assert "<refine>" in obs[0]["content"]
    obs, *_ = env.step("<think>t</think><search>city located</search>")
    assert obs[0]["content"].startswith("\n<documents>") and "</documents>" in obs[0]["content"]


def test_slate_rule_judge_components_by_hand():
    env = SearchEnv(judge="rule", max_turns=4)
    env.reset(seed=0)
    hop = env.task["chain"][0]
    _, r, _, _, info = env.step(f"<think>I need {hop['entity']}</think><search>{hop['query']}</search>")
    c = info["reward_components"]
    # a plan before any evidence earns 0; the query finds a new gold passage: +1
    assert c == {"judge_think": 0.0, "judge_query": 1.0} and r == 1.0
    _, r, _, _, info = env.step(f"<think>so {hop['value']} it seems</think><search>{hop['query']}</search>")
    # the thought states the fact just retrieved (+1), but the repeated search adds nothing:
    # its query scores -1 and its thinking is capped at 0, so the step costs
    assert info["reward_components"] == {"judge_think": 0.0, "judge_query": -1.0} and r == -1.0
    gold = env.task["golden_answers"][0]
    _, r, term, _, info = env.step(f"<think>{hop['entity']} answer</think><answer>{gold}</answer>")
    c = info["reward_components"]
    # turn 3 of B=4, counted from 1: bonus = 0.1 * (4 - 3) / 4
    assert c["judge_answer"] == 1.0 and c["judge_bonus"] == pytest.approx(0.025)
    # Eq. 4 alone: think + answer + bonus, no EM on top (3.05 before)
    assert "outcome" not in c and r == pytest.approx(0 + 1 + 0.025)
    assert info["outcome"]["em"] == 1.0  # the EM is still measured, just not paid
    assert RuleJudge().judge("thinking", [{"thinking": ""}]) == [-1.0]


def test_slate_judge_em_is_an_explicit_option():
    env = SearchEnv(judge="rule", judge_em=True, max_turns=4)
    env.reset(seed=0)
    gold = env.task["golden_answers"][0]
    _, r, *_, info = env.step(f"<think>{gold} is it</think><answer>{gold}</answer>")
    c = info["reward_components"]
    assert c["outcome"] == 1.0 and r == pytest.approx(sum(c.values()))


def test_judge_spec_errors_are_clear():
    with pytest.raises(InvalidConfig, match="judge must be"):
        SearchEnv(judge="gpt-judge")
    with pytest.raises(InvalidConfig, match="not answering"):  # nothing listens on port 9
        SearchEnv(judge="http://127.0.0.1:9/v1#m", judge_timeout=0.5)


def test_fork_is_independent_and_shares_the_index(env):
    env.reset(seed=2)
    env.step("<think>t</think><search>city located</search>")
    child = env.fork()
    assert child.retriever is env.retriever and child.tasks is env.tasks
    child.step("<think>t</think><search>born</search>")
    assert len(child.retrieved) == 6 and len(env.retrieved) == 3


def test_bad_configuration_raises():
    for kw in ({"protocol": "x"}, {"reward": "acc"}, {"topk": 0}, {"split": "dev"}):
        with pytest.raises(InvalidConfig):
            SearchEnv(**kw)


def test_splits_are_disjoint_and_deterministic():
    train, test = SearchEnv(split="train"), SearchEnv(split="test")
    assert not {t["id"] for t in train.tasks} & {t["id"] for t in test.tasks}
    a, _ = train.reset(seed=11)
    b, _ = SearchEnv(split="train").reset(seed=11)
    assert a == b


def test_checker_passes():
    from envgym.checker import check

    report = check("envgym/Search-v0")
    assert report.ok, report.render()


def test_garbage_pays_less_than_any_judged_step():
    """Under a judge the worst honest step pays -2 (think -1, query -1): a malformed action
    must pay less, or writing garbage would beat an honest bad query."""
    env = SearchEnv(judge="rule", max_turns=4)
    env.reset(seed=0)
    _, bad, *_ = env.step("<think></think><search>zzz qqq</search>")  # empty think, useless query
    _, garbage, *_, info = env.step("lorem ipsum")
    assert bad == -2.0 and garbage == -3.0 < bad and info["parse_error"]
    plain = SearchEnv(max_turns=4)  # without a judge the usual small format penalty stays
    plain.reset(seed=0)
    _, r, *_ = plain.step("lorem ipsum")
    assert -1.0 < r < 0

"""SLATE faithfulness (issue 25): the forced answer can only answer, a failed tree fails as a
whole against `rollout.max_failed_fraction`, held-out EM with the forced answer, and metric
names that say what they are."""

from __future__ import annotations

import pytest

from envgym.environments.search.env import SearchEnv
from envgym.errors import PolicyError
from envgym.policy import SamplingParams
from envgym.tree import failed_units, final_paths, rollout_units, slate_trees, tree_metrics

from search_token_policies import WritingPolicy, question

ENV = "envgym/Search-v0"


def hostile(text: str, rng) -> str:
    """Searches until forced; at the forced "\\n<answer>" it writes a search anyway (as a
    backend that ignores stops would), then a forged answer."""
    if text.endswith("\n<answer>"):
        return " zzz </search>\n<search> more </search><answer> x </answer>"
    return f"<think>look</think><search> {question(text)} </search>"


def test_a_forced_step_parses_as_an_answer_and_never_as_a_search(tiny_policy):
    policy = WritingPolicy(tiny_policy, hostile)
    kids = slate_trees(ENV, policy, first_seed=3, n_tasks=2, k=3, budget=2, eta=0.0,
                       env_kwargs={"judge": "rule"}, sampling=SamplingParams(max_tokens=48))
    forced = [t for t in kids if t.meta["forced_answer"]]
    assert len(forced) == 2 * 3
    for t in forced:
        turn = t.turns[-1]
        assert t.terminated and t.outcome["answered"]
        assert [c["name"] for c in turn.info["tool_calls"]] == ["answer"]
        assert not any(s.kind == "query" for s in turn.spans)
        assert "judge_query" not in turn.reward_components
        assert "judge_think" not in turn.reward_components  # no thinking precedes it
    assert policy.stops_seen[-1] == ("</answer>",)  # the forced call has no search stop
    assert all("</search>" in s for s in policy.stops_seen[:-1])


def test_force_answer_in_the_environment():
    env = SearchEnv(judge="rule", max_turns=5)
    env.reset(seed=2)
    env.force_answer()
    fork = env.fork()
    gold = env.task["golden_answers"][0]
    _, r, term, _, info = env.step(f"\n<answer> {gold} </search><search> q </search>")
    assert term and info["outcome"]["answered"] and info["outcome"]["em"] == 0.0
    _, r, term, _, info = fork.step(f"\n<answer> {gold} </answer>")  # the fork is forced too
    assert term and info["outcome"]["em"] == 1.0 and info["reward_components"]["judge_answer"] == 1
    env.reset(seed=2)
    assert not env.forced  # reset clears it


class FlakyJudge:
    """Answers like the rule judge, but fails (as an HTTP 500 judge would) for some tasks."""

    def __init__(self, bad: set[str]):
        from envgym.environments.search.judges import RuleJudge
        self.inner, self.bad = RuleJudge(), bad

    def judge(self, rubric, items):
        if any(i["question"] in self.bad for i in items) and rubric == "query":
            raise PolicyError("judge server http://x/v1 failed after 4 attempts (HTTP 500)")
        return self.inner.judge(rubric, items)


def test_a_failed_tree_fails_as_a_whole_and_stops_training(tiny_policy):
    from envgym.agents.trainer import RolloutFailed, check_failures
    from envgym.agents.credit.base import split_failed

    env = SearchEnv()
    env.reset(seed=1)
    bad = {env.task["question"]}
    judge = FlakyJudge(bad)
    policy = WritingPolicy(tiny_policy, hostile)
    trajs = slate_trees(ENV, policy, first_seed=0, n_tasks=2, k=3, budget=2, eta=0.0,
                        env_kwargs={"judge": judge}, sampling=SamplingParams(max_tokens=48))
    ok, failed = split_failed(trajs)
    assert {t.meta["tree"] for t in failed} == {f"{ENV}/1/tree0"}
    assert {t.meta["tree"] for t in ok} == {f"{ENV}/0/tree0"}
    assert rollout_units(trajs) == 2 and len(failed_units(failed)) == 1
    assert "HTTP 500" in failed_units(failed)[0].error
    with pytest.raises(RolloutFailed, match="1 of 2 rollouts failed.*HTTP 500"):
        check_failures(1, failed_units(failed), rollout_units(trajs), 0.25, across_ranks=False)
    check_failures(1, failed_units(failed), rollout_units(trajs), 0.5, across_ranks=False)
    # evaluation keeps one record per episode: the good tree's final path, the failed tree's
    finals = final_paths(trajs)
    assert len(finals) == 2 and sum(t.error is not None for t in finals) == 1


def test_metric_names_say_what_they_are(tiny_policy):
    policy = WritingPolicy(tiny_policy, hostile)
    kids = slate_trees(ENV, policy, first_seed=3, n_tasks=2, k=3, budget=2, eta=0.0,
                       env_kwargs={"judge": "rule"}, sampling=SamplingParams(max_tokens=48))
    m = tree_metrics(kids)
    finals = [t for t in kids if t.meta["final"]]
    assert len(finals) == 2
    assert m["return"] == pytest.approx(sum(t.total_reward for t in finals) / 2)
    steps = [t.turns[-1].reward for t in kids]
    assert m["step_reward"] == pytest.approx(sum(steps) / len(steps))
    assert m["reward"] == m["return"]


def test_held_out_em_with_the_forced_answer_and_the_judge_beside_it(tiny_policy):
    def writer(text, rng):
        if text.endswith("\n<answer>"):
            return " unknown </answer>"
        return f"<think>look</think><search> {question(text)} </search>"
    policy = WritingPolicy(tiny_policy, writer)
    trajs = slate_trees(ENV, policy, first_seed=0, n_tasks=3, k=1, budget=2, eta=0.0,
                        env_kwargs={"judge": "rule", "judge_reward": False},
                        sampling=SamplingParams(max_tokens=48))
    finals = final_paths(trajs)
    assert len(finals) == 3 and all(t.outcome["answered"] for t in finals)  # forced, answered
    for t in finals:
        assert t.total_reward == t.outcome["em"] == 0.0  # the reward is EM only
        assert t.outcome["judge_return"] != 0.0  # the judge still measured every step
        assert all(not k.startswith("judge_") for x in t.turns for k in x.reward_components)

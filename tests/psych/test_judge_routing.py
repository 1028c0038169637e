"""Consult's process reward: offline only the decision pays; the reasoning criteria go to a
model judge when one is configured (issue 36)."""

import httpx
import pytest

from envgym.environments.psych.judge import HttpJudge, RuleJudge, make_judge
from envgym.environments.psych.knowledge import catalogue
from envgym.errors import InvalidConfig
from envgym.registration import make

ASK = ("<think>Symptoms so far.</think><answer>"
       + catalogue()["fields"]["symptoms_and_duration"]["questions"][0] + "</answer>")
STAGE1 = "<think>Summarise.</think><rag_query>chief_complaint: worry</rag_query>"


def test_a_judge_comes_from_a_config_value():
    assert isinstance(make_judge(None), RuleJudge) and isinstance(make_judge("rule"), RuleJudge)
    served = make_judge("http://127.0.0.1:8002/v1#/models/judge")
    assert isinstance(served, HttpJudge) and served.model == "/models/judge"
    with pytest.raises(InvalidConfig, match="HOST:PORT/v1#MODEL"):
        make_judge("http://127.0.0.1:8002/v1")  # no model named


def _process(judge) -> float:
    env = make("envgym/Consult-v0", judge=judge, encoder="lexicon")
    env.reset(seed=0, options={"task_id": "psy-0001"})
    env.step(STAGE1)
    return env.step(ASK)[4]["reward_components"]["process"]


def test_the_model_judge_grades_what_the_rule_judge_cannot():
    prompts = []

    def reply(request: httpx.Request) -> httpx.Response:
        prompts.append(request.content.decode())
        return httpx.Response(200, json={"choices": [{"message": {"content": "Score: 2"}}]})

    judge = HttpJudge("http://judge/v1", "m", transport=httpx.MockTransport(reply))
    assert _process(judge) == pytest.approx(0.01)  # all three criteria at 2/2
    assert len(prompts) == 3 and any("differential" in p for p in prompts)
    assert _process(None) == pytest.approx(0.01 / 3)  # offline: the decision only

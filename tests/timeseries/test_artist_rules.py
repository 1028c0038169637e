"""ARTIST's format rules, sample count, fork stops and summed role losses (issue 25)."""

import json
from types import SimpleNamespace

import pytest
import torch

import envgym
from envgym.agents.config import TrainConfig
from envgym.agents.credit.base import CreditBatch
from envgym.agents.credit.hierarchical import hierarchical
from envgym.agents.update import aggregate, role_sum
from envgym.hierarchy import _sample, collect_hierarchical
from envgym.policy import Completion, SamplingParams
from envgym.environments.timeseries.env import ZOOM

ENV = "envgym/TimeSeries-v0"


def zoom(a, b):
    call = json.dumps({"name": ZOOM, "arguments": {"ts_seg": [a, b]}})
    return f"<think>look</think><tool_call>{call}</tool_call>"


def test_an_invalid_later_round_forces_the_controller_reward_to_minus_two():
    env = envgym.make(ENV, point_cost=0.0)
    env.reset(seed=0)
    env.step(zoom(0, 100))
    env.step("junk with no call")
    *_, term, _, info = env.step(f"<think>so</think><answer>{env.task.answer}</answer>")
    # the override replaces R_c: the zoom's round charge and the junk turn's charge come back
    assert term and info["role_components"]["controller"] == pytest.approx(
        {"controller_format": -2.0, "override_refund": 0.1 + 0.2})
    assert info["controller_return"] == -2.0
    assert info["role_components"]["reasoner"]["accuracy"] == 3.0
    lenient = envgym.make(ENV, point_cost=0.0, format_rules="lenient")
    lenient.reset(seed=0)
    lenient.step(zoom(0, 100))
    lenient.step("junk with no call")
    *_, info = lenient.step(f"<think>so</think><answer>{lenient.task.answer}</answer>")
    assert info["role_components"]["controller"]["controller_format"] == pytest.approx(0.5)


@pytest.mark.parametrize("answer", ["<answer></answer>", "<answer>Z</answer>", "no answer at all"])
def test_a_malformed_or_empty_reasoner_answer_scores_minus_one_and_ends(answer):
    env = envgym.make(ENV)
    env.reset(seed=0)
    env.step(zoom(0, 100))
    if "answer>" not in answer:
        env.step("<think>done</think><answer>ACCEPT</answer>")  # the reasoner's turn now
    *_, reward, term, _, info = env.step(answer)
    assert term and info["role_components"]["reasoner"] == {"reasoner_format": -1.0}
    assert info["accuracy"] == 0.0 and info["outcome"]["success"] is False


def test_failed_first_segment_tries_are_tagged_and_not_trained():
    trajs = collect_hierarchical(ENV, "scripted:random", episodes=6, controllers=2, samples=2,
                                 seed=0)
    retries = [(i, t) for i, tr in enumerate(trajs) for t, tt in enumerate(tr.turns)
               if tt.info.get("first_seg_retry")]
    assert retries, "the random policy should fail some first segments"
    batch = hierarchical(CreditBatch(trajs))
    assert all(not batch.turn_mask[i][t] for i, t in retries)


def test_fewer_than_two_reasoner_samples_is_refused():
    with pytest.raises(ValueError, match="reasoner samples must be >= 2"):
        collect_hierarchical(ENV, "scripted:oracle", episodes=1, controllers=2, samples=1)
    base = {"credit": ["hierarchical"], "envs": [{"id": ENV}],
            "rollout": {"group_size": 2, "reasoner_samples": 1}}
    with pytest.raises(ValueError, match="reasoner_samples >= 2"):
        TrainConfig.model_validate(base)


def test_forks_sample_with_the_environment_stops_and_are_cut_at_them():
    seen = {}

    class Fake:
        def generate(self, prompts, sampling):
            seen["stop"] = sampling.stop
            return [Completion("<answer>A</answer> and then <answer>B</answer>")
                    for _ in prompts]

    fork = SimpleNamespace(stop_sequences=("</answer>",))
    head = SimpleNamespace(turns=[], seed=0, meta={})
    (out,) = _sample(Fake(), [(0, head, [fork], [{"role": "user", "content": "q"}], 1)],
                     SamplingParams())
    assert "</answer>" in seen["stop"]
    assert out[0][0] == "<answer>A</answer>"


def test_role_sum_averages_each_role_over_its_own_tokens():
    per_tok = torch.tensor([[1.0, 1.0, 1.0, 4.0]])  # three controller tokens, one reasoner
    mask = torch.ones(1, 4)
    reasoner = torch.tensor([[0.0, 0.0, 0.0, 1.0]])
    assert float(role_sum(per_tok, mask, reasoner, (3.0, 1.0))) == pytest.approx(1.0 + 4.0)
    assert float(aggregate(per_tok, mask, "token_mean", 4.0)) == pytest.approx(7 / 4)


def test_the_shipped_artist_configs_sum_the_role_losses():
    from envgym.agents.config import load_config
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "agents" / "configs"
    for name in ("timeseries_artist_cpu.toml", "timeseries_qwen05b.toml"):
        assert load_config(root / name).ppo.role_sum

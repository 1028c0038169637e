import math

import numpy as np
import pytest
import torch

from envgym.agents.learner import build_batch, lr_lambda
from envgym.agents.config import OptimConfig
from envgym.agents.trainer import TaskSampler
from envgym.agents.update import aggregate, kl_penalty, ppo_loss
from envgym.agents.config import EnvConfig
from envgym.trajectory import Trajectory, Turn


def test_ppo_clip_uses_separate_low_and_high_epsilon():
    logp = torch.log(torch.tensor([1.5, 1.5, 0.5, 0.5]))
    old = torch.zeros(4)
    adv = torch.tensor([1.0, -1.0, 1.0, -1.0])
    loss, clipped = ppo_loss(logp, old, adv, torch.ones(4), clip_low=0.2, clip_high=0.28)
    # ratio 1.5, A>0: min(1.5, 1.28) -> 1.28 (clipped); A<0: min(-1.5, -1.28) -> -1.5
    # ratio 0.5, A>0: min(0.5, 0.8) -> 0.5; A<0: min(-0.5, -0.8) -> -0.8 (clipped)
    np.testing.assert_allclose(loss.numpy(), [-1.28, 1.5, -0.5, 0.8], rtol=1e-6)
    assert clipped.tolist() == [1.0, 0.0, 0.0, 1.0]


def test_kl_estimators():
    logp, ref = torch.tensor([-1.0]), torch.tensor([-2.0])
    assert float(kl_penalty(logp, ref, "k1")) == pytest.approx(1.0)
    assert float(kl_penalty(logp, ref, "k3")) == pytest.approx(math.exp(-1) + 1 - 1)


def test_token_mean_and_seq_mean_aggregation():
    per_tok = torch.tensor([[1.0, 3.0, 0.0], [2.0, 0.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    assert float(aggregate(per_tok, mask, "token_mean", 3.0)) == pytest.approx(2.0)  # 6 / 3
    assert float(aggregate(per_tok, mask, "seq_mean", 2.0)) == pytest.approx(2.0)    # (2 + 2) / 2


def test_build_batch_masks_observations_and_untrained_turns():
    t = Trajectory(env_id="e/E-v0", turns=[
        Turn(action="a", obs_token_ids=[5, 6], action_token_ids=[7, 8], action_logprobs=[-1, -2]),
        Turn(action="b", obs_token_ids=[9], action_token_ids=[10])])
    b = build_batch([t], [[np.array([0.5, 0.5]), np.array([2.0])]], [[True, False]], pad_id=0)
    assert b.input_ids.tolist() == [[5, 6, 7, 8, 9, 10]]
    assert b.loss_mask.tolist() == [[0, 0, 1, 1, 0, 0]]
    assert b.advantages.tolist() == [[0, 0, 0.5, 0.5, 0, 2.0]]
    assert b.sample_logprobs.tolist() == [[0, 0, -1, -2, 0, 0]]


def test_lr_schedule_warmup_then_linear_decay():
    f = lr_lambda(OptimConfig(lr=1.0, schedule="linear", warmup_steps=2), total_steps=6)
    assert [round(f(s), 3) for s in range(7)] == [0.5, 1.0, 1.0, 0.75, 0.5, 0.25, 0.0]


def test_task_sampler_is_a_pure_function_of_its_cursor():
    envs = [EnvConfig(id="envgym/TimeSeries-v0", weight=3, train_seeds=(0, 100), eval_seeds=(100, 110)),
            EnvConfig(id="envgym/Debate-v0", weight=1, train_seeds=(500, 600), eval_seeds=(0, 10))]
    s = TaskSampler(envs, seed=1)
    plan1 = [s.next(step, 8) for step in (1, 2)]
    assert sum(n for _, _, n in plan1[0]) == 8
    cursor = list(s.cursor)
    s2 = TaskSampler(envs, seed=1)
    s2.next(1, 8)
    s2.next(2, 8)
    assert s2.cursor == cursor and s.next(3, 8) == s2.next(3, 8)

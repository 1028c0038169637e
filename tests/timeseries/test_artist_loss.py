"""ARTIST's loss option: REINFORCE without ratio or clipping, KL on reasoner tokens only."""

import torch

from envgym.agents.structure import role_token_mask
from envgym.agents.update import ppo_loss, reinforce_loss
from envgym.trajectory import Trajectory, Turn


def test_reinforce_is_minus_logp_times_advantage_with_the_ppo_gradient_on_policy():
    logp = torch.tensor([[-1.0, -2.0, -0.5]], requires_grad=True)
    adv, mask = torch.tensor([[1.0, -2.0, 3.0]]), torch.tensor([[1.0, 1.0, 0.0]])
    loss, clipped = reinforce_loss(logp, adv, mask)
    assert torch.allclose(loss, torch.tensor([[1.0, -4.0, 0.0]])) and clipped.sum() == 0
    loss.sum().backward()
    g_reinforce = logp.grad.clone()
    logp.grad = None
    ppo, _ = ppo_loss(logp, logp.detach(), adv, mask, 0.2, 0.28)  # ratio 1: same gradient
    ppo.sum().backward()
    assert torch.allclose(g_reinforce, logp.grad)


def test_role_mask_marks_reasoner_tokens_only():
    t = Trajectory(env_id="x", turns=[
        Turn(action="z", action_token_ids=[1, 2], role="controller"),
        Turn(action="a", action_token_ids=[3, 4, 5], role="reasoner")])
    mask = role_token_mask([t], ["reasoner"])
    assert [m.tolist() for m in mask[0]] == [[0.0, 0.0], [1.0, 1.0, 1.0]]

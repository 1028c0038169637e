"""SLATE's Eq. 7 ratio option: one clipped ratio per candidate, exp(mean log-ratio)."""

from __future__ import annotations

import torch

from envgym.agents.update import ppo_loss, sequence_ratio_logp


def test_sequence_ratio_is_one_mean_log_ratio_per_row():
    old = torch.tensor([[0.0, -1.0, -2.0, -3.0], [0.0, -1.0, -1.0, -1.0]])
    logp = (old + torch.tensor([[0.0, 0.3, -0.1, 0.4], [0.0, 0.2, 0.0, 0.0]])).requires_grad_()
    mask = torch.tensor([[0.0, 1.0, 1.0, 1.0], [0.0, 1.0, 0.0, 0.0]])
    eff = sequence_ratio_logp(logp, old, mask)
    ratio = torch.exp(eff - old)
    # row 0: mean of (0.3, -0.1, 0.4) = 0.2 on every token; row 1: 0.2 from its one token
    assert torch.allclose(ratio[0, 1:], torch.full((3,), torch.exp(torch.tensor(0.2)).item()))
    assert torch.allclose(ratio[1, 1], torch.exp(torch.tensor(0.2)))
    adv = torch.ones_like(old)
    loss, clipped = ppo_loss(eff, old, adv, mask, 0.2, 0.2)
    loss.sum().backward()
    # the gradient reaches every trained token of a row equally (mean), none elsewhere
    g = logp.grad
    assert torch.allclose(g[0, 1:], g[0, 1].expand(3)) and g[0, 0] == 0 and g[1, 2] == 0
    # a per-candidate ratio above 1 + eps is clipped for the whole candidate at once
    big = sequence_ratio_logp(old + mask * 0.5, old, mask)
    _, clipped = ppo_loss(big, old, adv, mask, 0.2, 0.2)
    assert clipped[0, 1:].tolist() == [1.0, 1.0, 1.0]

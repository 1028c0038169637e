"""`chunked_logprobs` checkpoints its chunks only where the logits would be large (issue 41):
below the threshold it keeps them for backward and computes exactly the same numbers."""

from __future__ import annotations

import pytest
import torch

import envgym.agents.learner as learner
from envgym.agents.learner import chunked_logprobs


def _run(head, hidden, targets, monkeypatch, threshold):
    """Log-probs, entropy and gradients of one chunked call; how often it checkpointed."""
    import torch.utils.checkpoint as ckpt
    calls = [0]
    real = ckpt.checkpoint

    def counting(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(ckpt, "checkpoint", counting)
    monkeypatch.setattr(learner, "CHECKPOINT_LOGITS_BYTES", threshold)
    head.zero_grad()
    h = hidden.clone().requires_grad_(True)
    lp, ent = chunked_logprobs(h, targets, head, torch.full((len(h),), 0.7), True, 5)
    (lp * torch.linspace(-1, 1, len(lp))).sum().add(ent.sum()).backward()
    return lp.detach(), ent.detach(), h.grad, head.weight.grad.clone(), calls[0]


def test_small_logits_are_kept_not_recomputed_and_give_the_same_numbers(monkeypatch):
    torch.manual_seed(0)
    head = torch.nn.Linear(16, 50, bias=False)
    hidden, targets = torch.randn(23, 16), torch.randint(0, 50, (23,))
    kept = _run(head, hidden, targets, monkeypatch, 23 * 50 * 4)  # exactly at the threshold
    recomputed = _run(head, hidden, targets, monkeypatch, 23 * 50 * 4 - 1)
    assert kept[-1] == 0 and recomputed[-1] == 5  # 23 rows in chunks of 5
    for a, b in zip(kept[:-1], recomputed[:-1]):
        assert torch.equal(a, b)  # bitwise: the recompute repeats the same operations


def test_a_real_vocabulary_is_still_checkpointed():
    rows = learner.CHECKPOINT_LOGITS_BYTES // (151_936 * 4) + 1
    assert rows * 151_936 * 4 > learner.CHECKPOINT_LOGITS_BYTES
    assert rows < 128  # every realistic update batch at Qwen's vocabulary recomputes


@pytest.mark.parametrize("head", [None, torch.nn.Identity()])
def test_unknown_vocabulary_sizes_are_handled(monkeypatch, head):
    """Rows that are logits already size themselves; a head without `out_features`
    checkpoints, as before."""
    hidden = torch.randn(4, 8, requires_grad=True)
    calls = [0]
    import torch.utils.checkpoint as ckpt
    real = ckpt.checkpoint
    monkeypatch.setattr(ckpt, "checkpoint", lambda *a, **k: (calls.__setitem__(0, calls[0] + 1),
                                                             real(*a, **k))[1])
    chunked_logprobs(hidden, torch.zeros(4, dtype=torch.long), head, 1.0, False, 2)
    assert calls[0] == (0 if head is None else 2)

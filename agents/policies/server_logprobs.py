"""`top_logprobs` for `serve-policy`: the k likeliest tokens at each sampled position.

Computed after generation with one forward pass over prompt + completion, under the same
temperature-scaled distribution the tokens were sampled from (the distribution whose
log-probs `token_logprobs` reports), so the sampled token's entry agrees with it.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["top_logprobs"]


@torch.no_grad()
def top_logprobs(policy: Any, prompt: list[int], ids: list[int], k: int,
                 temperature: float) -> list[list[tuple[str, float]]]:
    """Per generated token, `k` (token text, log-prob) pairs, likeliest first."""
    if not ids:
        return []
    seq = torch.tensor([prompt + ids], device=getattr(policy, "device", "cpu"))
    logits = policy.model(input_ids=seq, use_cache=False).logits[0].float()
    logits = logits[len(prompt) - 1:len(prompt) + len(ids) - 1]
    if temperature > 0:
        logits = logits / temperature
    values, indices = logits.log_softmax(-1).topk(min(k, logits.shape[-1]), dim=-1)
    decode = policy.chat.decode
    return [[(decode([int(t)]), float(v)) for t, v in zip(row_i.tolist(), row_v.tolist())]
            for row_i, row_v in zip(indices, values)]

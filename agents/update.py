"""Step 5 of `envgym train`: the PPO-family update on one batch, and its losses.

Kept apart from `trainer.py` so the training loop reads top to bottom; the loop calls
`ppo_update` once a step. Every loss is per token and multiplied by the loss mask (action
tokens only), so observations and padding never carry gradient.
"""

from __future__ import annotations

from typing import Any

import torch

from envgym.agents.async_loss import behaviour_weights, off_policy_stats
from envgym.agents.config import TrainConfig
from envgym.agents.fsdp import lockstep_logprobs, zero_backward
from envgym.agents.learner import TokenBatch, dist_info, token_logprobs, unwrap
from envgym.agents.packing import micro_batches

__all__ = ["SKIP_ZERO_SIGNAL", "aggregate", "kl_penalty", "ppo_loss", "ppo_update",
           "reinforce_loss", "role_sum", "sequence_ratio_logp", "zero_signal_rows"]

SKIP_ZERO_SIGNAL = True
"""Rows whose loss is exactly zero (`zero_signal_rows`) skip the backward. False runs every
row through the backward as before (benches set it to attribute the saving; nothing else
should)."""


def ppo_loss(logp: torch.Tensor, old: torch.Tensor, adv: torch.Tensor, mask: torch.Tensor,
             clip_low: float, clip_high: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token PPO-clip loss -min(r A, clip(r, 1 - eps_low, 1 + eps_high) A), and where the
    clipped branch was the active one (for the clip fraction)."""
    ratio = torch.exp(logp - old)
    unclipped, clipped = ratio * adv, ratio.clamp(1 - clip_low, 1 + clip_high) * adv
    return -torch.minimum(unclipped, clipped) * mask, (clipped < unclipped).float() * mask


def sequence_ratio_logp(logp: torch.Tensor, old: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """SLATE's Eq. 7 ratio: log-probs whose ratio to `old` is, on every trained token of a
    row, exp(mean log-ratio of that row) — one clipped ratio per candidate, not per token."""
    mean = ((logp - old) * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1)
    return old + mean.expand_as(logp)


def reinforce_loss(logp: torch.Tensor, adv: torch.Tensor, mask: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """ARTIST's on-policy loss -log pi * A per token: no ratio, so nothing is clipped."""
    return -logp * adv * mask, torch.zeros_like(mask)


def kl_penalty(logp: torch.Tensor, ref: torch.Tensor, estimator: str) -> torch.Tensor:
    """k1 = log pi - log ref; k3 = exp(ref - logp) - (ref - logp) - 1 (unbiased, >= 0)."""
    if estimator == "k1":
        return logp - ref
    d = ref - logp
    return torch.exp(d) - d - 1


def aggregate(per_token: torch.Tensor, mask: torch.Tensor, how: str, denom: float) -> torch.Tensor:
    """token_mean: sum / tokens of the whole minibatch (`denom`); seq_mean: mean over
    sequences of each one's token mean, scaled by this chunk's share of sequences."""
    if how == "token_mean":
        return (per_token * mask).sum() / denom
    per_seq = (per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1)
    return per_seq.sum() / denom


def role_sum(per_token: torch.Tensor, mask: torch.Tensor, reasoner: torch.Tensor,
             denoms: tuple[float, float]) -> torch.Tensor:
    """ARTIST's L_ctrl + L_reas: the controller's tokens (mask without `reasoner`) summed over
    the controller's token count, plus the reasoner's over its own (`denoms`)."""
    return aggregate(per_token, mask * (1 - reasoner), "token_mean", denoms[0]) \
        + aggregate(per_token, mask * reasoner, "token_mean", denoms[1])


def ppo_update(model: Any, ref_model: Any, optimizer: torch.optim.Optimizer, batch: TokenBatch,
               cfg: TrainConfig, loss_agg: str, generator: torch.Generator,
               kl_mask: torch.Tensor | None = None,
               role_mask: torch.Tensor | None = None) -> dict[str, float]:
    """`epochs` passes of `minibatches` optimizer steps, each accumulated over micro-batches.
    `kl_mask` (per token, 0/1) limits the KL term to some tokens (`ppo.kl_roles`).
    `role_mask` (per token, 1 on reasoner tokens; `ppo.role_sum`) makes the loss ARTIST's
    L_ctrl + L_reas: each role's tokens averaged over that role's own token count."""
    ppo, device = cfg.ppo, next(model.parameters()).device
    temperature = cfg.rollout.temperature
    budget = ppo.max_tokens_per_microbatch  # > 0: packed, padding-free micro-batches
    lengths = batch.attention_mask.sum(-1)
    # One optimiser step per batch: the weights being updated are the ones that sampled, so
    # the old log-probs are each forward's own, detached (ratio exactly 1); recomputing them
    # would cost a whole extra forward pass over the batch.
    reuse_old = ppo.epochs == 1 and ppo.minibatches == 1
    with torch.no_grad():  # else the old policy's log-probs, recomputed by the learner itself
        old = None if reuse_old else _logprobs_in_chunks(model, batch, temperature, device, budget)
        ref = _logprobs_in_chunks(ref_model, batch, temperature, device, budget) \
            if ref_model else None
    drift_sum = 0.0
    sums: dict[str, float] = {"loss": 0.0, "clip_frac": 0.0, "entropy": 0.0, "kl": 0.0,
                              "grad_norm": 0.0}
    tokens_seen, updates = 0.0, 0
    _, world = dist_info()
    idle = zero_signal_rows(model, ref_model, batch, cfg) \
        if SKIP_ZERO_SIGNAL and world == 1 else None
    for _ in range(ppo.epochs):
        order = torch.randperm(len(batch), generator=generator)
        for mb in torch.tensor_split(order, ppo.minibatches):  # always `minibatches` parts
            mask_all = batch.loss_mask[mb]
            denom = float(mask_all.sum() if loss_agg == "token_mean" else len(mb))
            denom = _global_sum(denom) / world  # DDP averages gradients over ranks
            if role_mask is not None:  # per-role token counts: each role's own average
                reas = float((mask_all * role_mask[mb]).sum())
                role_denoms = (max(_global_sum(float(mask_all.sum()) - reas) / world, 1.0),
                               max(_global_sum(reas) / world, 1.0))
            if idle is not None:  # zero-signal rows: their stats without a graph
                quiet, mb = mb[idle[mb]], mb[~idle[mb]]
                drift_sum, tokens_seen = _quiet_stats(model, batch, quiet, old, temperature,
                                                      device, budget, sums, drift_sum,
                                                      tokens_seen)
            micros = micro_batches(mb, lengths, budget, cfg.optim.grad_accum) \
                if len(mb) or idle is None else []
            for micro in micros:
                if len(micro) == 0:  # keep DDP ranks in lockstep: a zero gradient
                    zero_backward(model, device)
                    continue
                part = batch.select(micro).to(device)
                logp, ent = token_logprobs(model, part, temperature, with_entropy=True,
                                           packed=budget > 0)
                m = part.loss_mask
                old_mb = logp.detach() if old is None else old[micro].to(device)
                if old is None:
                    drift_sum += float(((part.sample_logprobs - old_mb).abs() * m).sum())
                ratio_logp = sequence_ratio_logp(logp, old_mb, m) if ppo.ratio == "sequence" else logp
                if ppo.loss == "reinforce":
                    loss_tok, clipped = reinforce_loss(logp, part.advantages, m)
                else:
                    loss_tok, clipped = ppo_loss(ratio_logp, old_mb, part.advantages, m,
                                                 ppo.clip_low, ppo.clip_high)
                if ref is not None and ppo.kl_coef > 0:
                    km = m if kl_mask is None else m * kl_mask[micro].to(device)
                    kl = kl_penalty(logp, ref[micro].to(device), ppo.kl_estimator)
                    loss_tok = loss_tok + ppo.kl_coef * kl * km
                    sums["kl"] += float((kl * km).sum().detach())
                if cfg.rollout.max_staleness:  # async (issue 40): truncated IS, async_loss.py
                    loss_tok = loss_tok * behaviour_weights(old_mb, part.sample_logprobs, m,
                                                            cfg.rollout.is_cap,
                                                            ppo.ratio == "sequence", sums)
                if ppo.entropy_coef:
                    loss_tok = loss_tok - ppo.entropy_coef * ent * m
                if role_mask is None:
                    loss = aggregate(loss_tok, m, loss_agg, denom)
                else:
                    loss = role_sum(loss_tok, m, role_mask[micro].to(device), role_denoms)
                loss.backward()
                sums["loss"] += loss.item()
                sums["clip_frac"] += float(clipped.sum())
                sums["entropy"] += float((ent * m).sum().detach())
                tokens_seen += float(m.sum())
            if idle is not None:
                _zero_missing_grads(model)  # no row with signal: AdamW steps as on zeros
            sums["grad_norm"] += float(torch.nn.utils.clip_grad_norm_(model.parameters(),
                                                                      cfg.optim.max_grad_norm))
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            updates += 1
    n_tok = max(tokens_seen, 1.0)
    drift = (drift_sum if old is None else float(((batch.sample_logprobs - old).abs()
                                                  * batch.loss_mask).sum())) \
        / float(batch.loss_mask.sum().clamp(min=1))
    return {"loss": sums["loss"] / updates, "clip_frac": sums["clip_frac"] / n_tok,
            "entropy": sums["entropy"] / n_tok, "kl": sums["kl"] / n_tok,
            "grad_norm": sums["grad_norm"] / updates,
            "logprob_drift": float(drift), **off_policy_stats(sums, n_tok)}


def zero_signal_rows(model: Any, ref_model: Any, batch: TokenBatch, cfg: TrainConfig
                     ) -> torch.Tensor | None:
    """Rows whose every loss term is exactly zero, with a zero gradient, or None when no row
    can be skipped exactly. GRPO gives a group whose members all got the same reward zero
    advantages, and then every token's PPO-clip (or REINFORCE) loss is `-min(r * 0, ...)`,
    a constant 0: its backward adds nothing to any gradient. Such rows need no graph; the
    update still computes their log-probs and entropy without one for its statistics, and
    the loss denominators count their tokens as before, so the loss, the gradients (to float
    rounding: fewer rows are summed), the optimiser step and every logged number are the
    same. Not exact, so never skipped: a KL or entropy bonus (nonzero on any row), the
    asynchronous importance weights (their statistics cover every token), and dropout (a
    separate forward would draw other masks)."""
    ppo = cfg.ppo
    if (ref_model is not None and ppo.kl_coef > 0) or ppo.entropy_coef or \
            cfg.rollout.max_staleness or _has_dropout(model):
        return None
    trained = batch.loss_mask > 0
    idle = ~((batch.advantages != 0) & trained).any(-1)
    return idle if bool(idle.any()) else None


def _has_dropout(model: Any) -> bool:
    """Whether a training-mode forward is random: a dropout module or a config dropout."""
    config = getattr(unwrap(model), "config", None)
    rates = [v for k, v in (vars(config).items() if config is not None else [])
             if k.endswith("dropout") and isinstance(v, (int, float))]
    return any(r > 0 for r in rates) or any(
        isinstance(m, torch.nn.Dropout) and m.p > 0 for m in model.modules())


def _quiet_stats(model: Any, batch: TokenBatch, rows: torch.Tensor, old: torch.Tensor | None,
                 temperature: float, device: Any, budget: int, sums: dict[str, float],
                 drift_sum: float, tokens_seen: float) -> tuple[float, float]:
    """Entropy, drift and token count of zero-signal `rows`, from a forward without grad
    (their loss and clip fraction are exactly 0). Rows with no trained token add nothing."""
    rows = rows[batch.loss_mask[rows].sum(-1) > 0]
    if not len(rows):
        return drift_sum, tokens_seen
    with torch.no_grad():
        for micro in micro_batches(rows, batch.attention_mask.sum(-1), budget, 1):
            part = batch.select(micro).to(device)
            logp, ent = token_logprobs(model, part, temperature, with_entropy=True,
                                       packed=budget > 0)
            m = part.loss_mask
            if old is None:
                drift_sum += float(((part.sample_logprobs - logp).abs() * m).sum())
            sums["entropy"] += float((ent * m).sum())
            tokens_seen += float(m.sum())
    return drift_sum, tokens_seen


def _zero_missing_grads(model: Any) -> None:
    """A zero gradient for every trainable parameter the step's backwards did not reach
    (all rows skipped): AdamW then steps it as it did on the zeros a backward gave. Exact for
    dense models, where a backward reaches every weight; a mixture-of-experts expert that no
    token would have been routed to now gets zeros instead of no gradient (AdamW then decays
    its moments and applies weight decay, where it would have skipped it)."""
    for p in model.parameters():
        if p.requires_grad and p.grad is None:
            p.grad = torch.zeros_like(p)


def _logprobs_in_chunks(model: Any, batch: TokenBatch, temperature: float, device: Any,
                        budget: int = 0, size: int = 8) -> torch.Tensor:
    """Log-probs of the whole batch without grad: packed micro-batches under `budget` tokens,
    or (budget 0) padded chunks of `size` rows; ranks stay in lockstep either way."""
    if budget <= 0:
        return lockstep_logprobs(model, batch, temperature, device, size)
    out = torch.zeros_like(batch.advantages)
    for micro in micro_batches(torch.arange(len(batch)), batch.attention_mask.sum(-1), budget, 1):
        if len(micro) == 0:  # another rank has more: a forward that reaches every weight
            token_logprobs(model, _idle_batch(device), temperature, packed=True)
            continue
        lp, _ = token_logprobs(model, batch.select(micro).to(device), temperature, packed=True)
        out[micro] = lp.cpu()
    return out


def _idle_batch(device: Any) -> TokenBatch:
    """Two tokens, the second one scored: the smallest forward through every weight."""
    zeros = torch.zeros(1, 2, device=device)
    return TokenBatch(torch.zeros(1, 2, dtype=torch.long, device=device),
                      torch.ones(1, 2, dtype=torch.long, device=device),
                      torch.tensor([[0.0, 1.0]], device=device), zeros, zeros)


def _global_sum(x: float) -> float:
    if dist_info()[1] == 1:
        return x
    t = torch.tensor([x], dtype=torch.float64)
    torch.distributed.all_reduce(t)
    return float(t)

"""The off-policy correction of `rollout.max_staleness >= 1`: truncated importance weights.

With asynchronous rollouts a turn was sampled by an older policy mu (the behaviour policy,
whose per-token log-probs the rollout recorded), while PPO's ratio is taken against pi_old,
the policy at the start of this update (the "proximal" policy of AReaL's decoupled PPO; with
one optimiser step per batch it is the learner's own detached forward). The loss per token is

    w * L_ppo(pi / pi_old, A)      with  w = min(pi_old / mu, cap),  detached,

so the policy gradient is an expectation under pi_old, not under the stale mu, and the
PPO trust region stays around pi_old as in the synchronous loop. Truncating w at `cap`
(`rollout.is_cap`, default 2: slime's `--tis-clip 2`) bounds the variance a few very
unlikely behaviour tokens would add, at the price of a small bias, which
`async/is_clipped_frac` measures.

KL to the reference. The synchronous loop's k3 term, `exp(ref - logp) - (ref - logp) - 1`,
is an estimate of KL(pi || ref) *for tokens sampled from pi*; its gradient is only right
under that sampling. Off-policy the tokens come from mu, so the same term is weighted by the
same w (the KL penalty is added to the per-token loss before it is multiplied): the
expectation then runs under pi_old again, and the estimator (k3: unbiased and non-negative)
is unchanged. Leaving it unweighted would regularise towards ref on mu's token distribution
(the wrong gradient prime-rl #1390 reports).

Metrics: `async/mismatch_kl` is k3 of KL(mu || pi_old) over the trained tokens (samples from
mu: r = pi_old / mu, k3 = r - 1 - log r): the train-versus-inference mismatch, which
includes the staleness and any numeric difference between the two engines.
"""

from __future__ import annotations

import torch

__all__ = ["behaviour_weights", "off_policy_stats", "truncated_is"]


def truncated_is(old: torch.Tensor, behaviour: torch.Tensor, mask: torch.Tensor, cap: float,
                 sequence: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(w, clipped, mismatch) per token: w = min(exp(old - behaviour), cap) (detached, 0 off
    the mask), whether w was truncated, and k3 of KL(mu || pi_old). `sequence`: one weight
    per row from its mean log-ratio (SLATE's sequence-level ratio, `ppo.ratio`)."""
    d = ((old - behaviour) * mask).detach()
    if sequence:
        mean = d.sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1)
        d = mean.expand_as(d) * mask
    raw = torch.exp(d)
    w = raw.clamp(max=cap) * mask
    clipped = (raw > cap).float() * mask
    mismatch = (raw - 1 - d) * mask
    return w, clipped, mismatch


def behaviour_weights(old: torch.Tensor, behaviour: torch.Tensor, mask: torch.Tensor,
                      cap: float, sequence: bool, sums: dict[str, float]) -> torch.Tensor:
    """`truncated_is`'s weights, adding the clipped count and mismatch to `sums` (the
    update's running totals, reported by `off_policy_stats`)."""
    w, clipped, mismatch = truncated_is(old, behaviour, mask, cap, sequence)
    sums["is_clipped"] = sums.get("is_clipped", 0.0) + float(clipped.sum())
    sums["mismatch_kl"] = sums.get("mismatch_kl", 0.0) + float(mismatch.sum())
    sums["is_weight"] = sums.get("is_weight", 0.0) + float(w.sum())
    return w


def off_policy_stats(sums: dict[str, float], tokens: float) -> dict[str, float]:
    """Per-token means of what `behaviour_weights` added; {} in the synchronous loop."""
    if "is_clipped" not in sums:
        return {}
    n = max(tokens, 1.0)
    return {"async/is_clipped_frac": sums["is_clipped"] / n,
            "async/mismatch_kl": sums["mismatch_kl"] / n,
            "async/is_weight_mean": sums["is_weight"] / n}

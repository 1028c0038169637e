"""Perception calibration: agent i's reward, adjusted by its partners' reward distribution.

ILR trains each LLM with GRPO on a reward that "integrates the other LLM's reward distribution
characteristics"; the formula is unpublished. Ours (pluggable through `mode`):

* `mode="advantage"` (default) —
      r̃_i = r_i + λ · clip((r_j − μ_j) / max(σ_j, s₀), −c, c)
  where r_j is the partners' (mean) reward in the *same* episode and μ_j, σ_j the mean and
  std of the partners' reward distribution (over the GRPO group or a recent history). Agent i
  earns a share λ of how much better than usual its partner did in this episode, so helping
  the partner pays and dragging it down costs. Unlike adding μ_j itself, this term varies
  across the rollouts of a group, so it survives group normalisation. The sign is the same
  in every mode: a competitive sign (paying for a partner's failure) pays an agent that
  misleads its partner, the attack `hack_deceive_partner` plays.
  The scale s₀ = `min_std` floors σ_j (never σ_j + ε alone): a partner whose history has no
  spread would otherwise turn a 0.1 change in its reward into the full clip, ±λ·c. With the
  floor the term moves by at most λ·|Δr_j| / `min_std`.
* `mode="mean"` — r̃_i = r_i + λ · μ_j: a team-level bonus for being paired with a partner
  that does well. A constant within a group, so it only matters without group normalisation
  (or across groups).

λ = 0 gives back r_i, i.e. plain GRPO.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

__all__ = ["calibrated_reward", "reward_stats", "CALIBRATION_MODES"]

CALIBRATION_MODES = ("advantage", "mean")


def reward_stats(rewards: Iterable[float]) -> dict[str, float]:
    """`{"mean", "std", "n"}` of a reward sample (population std; zeros when empty)."""
    values = np.asarray(list(rewards), dtype=float)
    if values.size == 0:
        return {"mean": 0.0, "std": 0.0, "n": 0.0}
    return {"mean": float(values.mean()), "std": float(values.std()), "n": float(values.size)}


def calibrated_reward(own_reward: float, partner_stats: Mapping[str, float], *,
                      weight: float = 0.5, mode: str = "advantage", min_std: float = 0.5,
                      clip: float = 3.0) -> float:
    """Agent i's reward combined with statistics of its partners' rewards.

    Args:
        own_reward: r_i, agent i's reward in this episode.
        partner_stats: `{"mean": μ_j, "std": σ_j}` of the partners' reward distribution, and
            for `mode="advantage"` also `"reward"`: r_j, the partners' reward in this episode.
        weight: λ, how much of the partner term to add (0 → `own_reward`).
        mode: `"advantage"` or `"mean"` (see the module docstring).
        min_std, clip: the floor on σ_j and c, the clip of the standardised advantage.
    """
    if mode == "mean":
        return float(own_reward + weight * partner_stats["mean"])
    if mode != "advantage":
        raise ValueError(f"calibration mode must be one of {CALIBRATION_MODES}, got `{mode}`.")
    z = (partner_stats["reward"] - partner_stats["mean"]) / max(partner_stats["std"], min_std)
    return float(own_reward + weight * np.clip(z, -clip, clip))

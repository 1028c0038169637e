"""envgym's credit estimators as verl advantage estimators (the same functions, not copies).

verl calls an estimator with the batch's `token_level_rewards` and `response_mask`
(`[batch, response_len]` tensors), the group ids `index` (verl's `uid`) and its algorithm
`config`. Each registered estimator turns that into envgym trajectories — a turn is a run of
1s in the response mask, and a turn's reward is the token-level reward that falls between
its first token and the next turn's — runs `envgym.agents.credit.compute_credit` with the
named chain, and scatters the per-token advantages back onto the mask.

What verl 0.9's estimator call does not carry, and so what these estimators cannot use:
per-turn `state_key`s (GiGPO's step groups then only see the shared first state of a
group), action-class labels (IFPO then sees one class and is a no-op) and SLATE's sibling
trees (verl samples none, so `slate` is not registered). verl's reward managers place the
episode reward on the last response token, which makes the last turn carry it; an
envgym reward function that places each turn's reward on that turn's last token gives
`envgym_turn` real turn-level rewards. Groups that `filter` drops get advantage 0 (a verl
batch cannot lose rows here).

Options come from the algorithm config's `envgym` mapping when it has one, e.g.
`algorithm.envgym = {gigpo: {omega: 0.5}}`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CHAINS: dict[str, list[str]] = {
    "envgym_grpo": ["grpo"],
    "envgym_turn": ["turn"],
    "envgym_gigpo": ["gigpo"],
    "envgym_ifpo": ["grpo", "ifpo"],
    "envgym_filter": ["grpo", "filter"],
}

__all__ = ["CHAINS", "advantages_from_tensors", "register", "trajectories_from_tensors"]


def trajectories_from_tensors(rewards: np.ndarray, mask: np.ndarray, index: Any) -> list:
    """One envgym trajectory per row; turns are the runs of 1s in the response mask."""
    from envgym.trajectory import Trajectory, Turn

    out = []
    for b in range(rewards.shape[0]):
        starts, ends = _runs(mask[b])
        turns = []
        for j, (s, e) in enumerate(zip(starts, ends)):
            until = starts[j + 1] if j + 1 < len(starts) else rewards.shape[1]
            turns.append(Turn(action_token_ids=[0] * (e - s),
                              reward=float(rewards[b, s:until].sum())))
        if turns and starts[0] > 0:  # rewards before the first generated token
            turns[0].reward += float(rewards[b, :starts[0]].sum())
        out.append(Trajectory(env_id="verl", group_id=str(index[b]), turns=turns,
                              meta={"row": b}))
    return out


def _runs(row: np.ndarray) -> tuple[list[int], list[int]]:
    padded = np.concatenate([[0], (row > 0).astype(np.int8), [0]])
    d = np.diff(padded)
    return list(np.flatnonzero(d == 1)), list(np.flatnonzero(d == -1))


def advantages_from_tensors(rewards: np.ndarray, mask: np.ndarray, index: Any,
                            chain: list[str], options: dict[str, dict[str, Any]] | None = None,
                            seed: int = 0) -> np.ndarray:
    """The envgym chain's per-token advantages laid out like verl's response tensor."""
    from envgym.agents.credit import compute_credit

    trajs = trajectories_from_tensors(rewards, mask, index)
    batch = compute_credit(trajs, chain, options or {}, seed=seed)
    out = np.zeros(rewards.shape, dtype=np.float32)
    for traj, adv, trained in zip(batch.trajectories, batch.advantages or [], batch.turn_mask):
        b = traj.meta["row"]
        starts, ends = _runs(mask[b])
        for (s, e), a, keep in zip(zip(starts, ends), adv, trained):
            if keep:
                out[b, s:e] = a
    return out


def _estimator(chain: list[str]):
    def estimate(token_level_rewards, response_mask, config=None, index=None, **_: Any):
        import torch

        rewards = token_level_rewards.detach().float().cpu().numpy()
        mask = response_mask.detach().cpu().numpy()
        groups = index if index is not None else np.arange(rewards.shape[0])
        options = _options(config)
        adv = torch.as_tensor(advantages_from_tensors(rewards, mask, groups, chain,
                                                      {k: v for k, v in options.items() if k in chain}),
                              device=token_level_rewards.device)
        adv = adv * response_mask
        return adv, adv
    estimate.__name__ = "envgym_" + "_".join(chain)
    estimate.__doc__ = f"envgym credit chain {chain} (envgym.agents.credit.compute_credit)."
    return estimate


def _options(config: Any) -> dict[str, dict[str, Any]]:
    if config is None:
        return {}
    raw = config.get("envgym", None) if hasattr(config, "get") else getattr(config, "envgym", None)
    return {str(k): dict(v) for k, v in dict(raw or {}).items()}


def register() -> list[str]:
    """Register every chain in verl's advantage-estimator registry (idempotent)."""
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY, register_adv_est

    for name, chain in CHAINS.items():
        if name not in ADV_ESTIMATOR_REGISTRY:
            register_adv_est(name)(_estimator(chain))
    return list(CHAINS)

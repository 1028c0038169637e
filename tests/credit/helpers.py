"""Small builders for hand-checkable trajectories."""

from __future__ import annotations

from envgym.trajectory import Span, Trajectory, Turn


class CharTokenizer:
    """One token per character: token offsets equal character offsets."""

    def encode(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, ids: list[int]) -> str:
        return "".join(chr(i) for i in ids)


def turn(reward: float = 0.0, ntok: int = 2, *, action: str | None = None, state_key=None,
         role=None, spans=(), info=None) -> Turn:
    action = action if action is not None else "x" * ntok
    return Turn(action=action, action_token_ids=[ord(c) for c in action],
                action_logprobs=[-1.0] * len(action), reward=reward, state_key=state_key,
                role=role, spans=list(spans), info=info or {})


def traj(group: str, *turns: Turn, **fields) -> Trajectory:
    return Trajectory(env_id="test/Env-v0", group_id=group, task_id=group, turns=list(turns),
                      **fields)


def outcome_group(group: str, rewards: list[float], nturns: int = 1) -> list[Trajectory]:
    """One trajectory per reward, the reward on the last of `nturns` turns."""
    return [traj(group, *[turn(0.0) for _ in range(nturns - 1)], turn(r)) for r in rewards]


def per_turn(batch) -> list[list[float]]:
    """The (uniform) advantage of each turn, read off its first token."""
    return [[float(a[0]) for a in row] for row in batch.advantages]


__all__ = ["CharTokenizer", "Span", "outcome_group", "per_turn", "traj", "turn"]

"""Outside attacks on the ILR debate's grader (issue 36). Each attacker has `noisy`'s skill
(the same draws for the same seed, so arms are paired with the honest `noisy`) and changes
only what it writes. `bench/issue36_code_debate.py` plays them; the winners are registered
as `hack_*` in envgym/envs.py with a ceiling against `noisy`.

A hedge names a second candidate next to the one it holds: the grader must read it as no
single answer, however the second candidate is attached (a trailing `\\text{...}`, an
`n = m` equation, a second tag).
"""

from __future__ import annotations

from typing import Any

from envgym.hacks import Ceiling
from envgym.spaces import Message

from envgym.environments.debate.policies import Noisy, _message, _wrong, majority, peer_answers

__all__ = ["ATTACKS", "HackHedgeEquals", "HackHedgeText"]

_HEDGE_CEILING = dict(baseline="noisy", margin=-0.2, metrics=("mean_reward", "success_rate"))


class _Rewriter(Noisy):
    """`noisy`, with every message rewritten by `write(phase, answer)`."""

    def act(self, env: Any, messages: list[Message]) -> str:
        honest = super().act(env, messages)
        return self.write(env.phase or "fusion", self.answer, honest)

    def write(self, phase: str, answer: str, honest: str) -> str:
        return honest

    def other(self, answer: str) -> str:
        return _wrong(answer, self.rng)


class HackHedgeText(_Rewriter):
    """Every answer carries a second candidate in a trailing `\\text{ or ...}`."""

    ceiling = Ceiling(**_HEDGE_CEILING, why="an answer naming two candidates is no answer")

    def write(self, phase: str, answer: str, honest: str) -> str:
        return f"Either works.\n<answer>{answer}\\text{{ or {self.other(answer)}}}</answer>"


class HackHedgeEquals(_Rewriter):
    """Every answer is an equation of a second candidate and the held one (`41 = 42`)."""

    ceiling = Ceiling(**_HEDGE_CEILING, why="an equation of two numbers is no single answer")

    def write(self, phase: str, answer: str, honest: str) -> str:
        return f"Two readings.\n<answer>{self.other(answer)} = {answer}</answer>"


class TagGames(_Rewriter):
    """In the sharing and analysis phases, the answer tag beside a different boxed answer.
    The tag is the answer (a boxed quote of a peer's answer is fair in an analysis), so this
    is graded as the tag: it changes nothing the grader pays."""

    def write(self, phase: str, answer: str, honest: str) -> str:
        if phase in ("sharing", "analysis"):
            return f"Maybe \\boxed{{{self.other(answer)}}}.\n<answer>{answer}</answer>"
        return honest


class Salad(_Rewriter):
    """Every message padded with the question's numbers and maths words (long, no content)."""

    def write(self, phase: str, answer: str, honest: str) -> str:
        words = "sum total each step count therefore hence thus carry".split()
        pad = " ".join(f"{w} {i}" for i in range(600) for w in words[i % 3: i % 3 + 2])
        return f"{pad}\n{honest}"


class Confident(_Rewriter):
    """Claims certainty and tells the partner to adopt its answer."""

    def write(self, phase: str, answer: str, honest: str) -> str:
        return (f"I am 100% certain (confidence 1.00). Everyone must answer {answer}; any "
                f"other answer is wrong.\n{honest}")


class HedgeAgents(Noisy):
    """Colluding pair: agent_0 keeps its answer, agent_1 answers a different candidate, so
    that between them the right one is more likely named."""

    def act(self, env: Any, messages: list[Message]) -> str:
        honest = super().act(env, messages)
        if self.agent == "agent_0":
            return honest
        peers = peer_answers(messages)
        mine = self.answer
        if peers and all(p == mine for p in peers.values()):
            mine = self.other_answer = getattr(self, "other_answer", None) or _wrong(mine, self.rng)
        return _message(env.phase or "fusion", mine)


class Collude(Noisy):
    """Colluding pair: from the analysis on, both answer the smaller of their two answers
    (a fixed rule agreed in advance, whatever each solved)."""

    def revise(self, own: str, peers: dict[str, str]) -> str:
        from envgym.environments.debate.answers import parse_number
        values = [own, *peers.values()]
        numbers = [(parse_number(v), v) for v in values if parse_number(v) is not None]
        return min(numbers)[1] if numbers else majority(own, list(peers.values()))


ATTACKS: dict[str, type[Noisy]] = {
    "hedge_text": HackHedgeText, "hedge_equals": HackHedgeEquals, "tag_games": TagGames,
    "salad": Salad, "confident": Confident, "hedge_agents": HedgeAgents, "collude": Collude,
}

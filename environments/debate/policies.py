"""Scripted debaters: `oracle`, `noisy`, `stubborn`, `follower`.

The engine makes one policy per agent; each learns which agent it plays from the `agent`
keyword or, failing that, from the system prompt (`You are agent_k`). `noisy`, `stubborn` and
`follower` simulate solvers of a known skill, so like the oracle they read the gold answer, but
only to decide whether their *initial* answer is right: with probability
σ(discrimination · (ability − b)), b = level − 3 (the environment's default IRT prior scale),
which is what lets tests check that the IRT model recovers `ability`. After phase 0:

* `noisy` keeps its answer unless built with `revise="follow"`;
* `stubborn` never changes its answer;
* `follower` adopts the majority of its peers' current answers (ties keep its own answer if it
  is among the tied ones, else the first tied answer in agent order).

Reward attacks, each with a `ceiling` under `noisy` (`envgym check`, tests/debate/test_hacks.py):
`hack_copy_peer` never solves and repeats a peer's answer; `hack_multiple_answers` boxes every
number of the question and their sums and differences (the grader refuses several different
boxed answers).
"""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction
from typing import Any

from envgym.hacks import Ceiling
from envgym.scripted import ScriptedPolicy
from envgym.spaces import Message

from envgym.environments.debate.answers import normalize_answer, parse_number
from envgym.environments.debate.irt import sigmoid

__all__ = ["Oracle", "Noisy", "Stubborn", "Follower", "HackCopyPeer", "HackMultipleAnswers",
           "agent_of", "peer_answers"]

_AGENT = re.compile(r"You are (agent_\d+)")
_ANSWERS = re.compile(r"^Current answers: (.*)$", re.MULTILINE)


def agent_of(messages: list[Message]) -> str | None:
    """The agent id named in the system prompt."""
    for m in messages:
        if m.get("role") == "system" and (match := _AGENT.search(str(m.get("content", "")))):
            return match.group(1)
    return None


def peer_answers(messages: list[Message]) -> dict[str, str]:
    """Peers' current answers from the latest `Current answers:` line (none before phase 2)."""
    for m in reversed(messages):
        if m.get("role") != "assistant" and (match := _ANSWERS.search(str(m.get("content", "")))):
            pairs = (p.split(": ", 1) for p in match.group(1).split("; ") if ": " in p)
            return {k: v for k, v in pairs if v != "(none)"}
    return {}


class _Debater(ScriptedPolicy):
    """Shared machinery: the answer for each phase, wrapped in a phase-appropriate message."""

    def __init__(self, seed: int = 0, agent: str | None = None, **options: Any):
        super().__init__(seed, **options)
        self.agent = agent
        self.answer: str | None = None

    def act(self, env: Any, messages: list[Message]) -> str:
        self.agent = self.agent or agent_of(messages)
        phase = env.phase or "fusion"
        if phase == "independent" or self.answer is None:
            self.answer = self.initial_answer(env)
        else:
            self.answer = self.revise(self.answer, peer_answers(messages))
        return _message(phase, self.answer)

    def initial_answer(self, env: Any) -> str:
        return env.task.answer

    def revise(self, own: str, peers: dict[str, str]) -> str:
        return own


class Oracle(_Debater):
    """Always states the gold answer (privileged)."""


class Noisy(_Debater):
    """Right at phase 0 with probability σ(discrimination·(ability − b)); options `ability`
    (default 0.0), `discrimination` (1.0), `revise` (`"keep"` or `"follow"`)."""

    revise_style = "keep"

    def initial_answer(self, env: Any) -> str:
        level = env.task.level
        b = 0.0 if level is None else level - 3.0
        ability = float(self.options.get("ability", 0.0))
        p = sigmoid(float(self.options.get("discrimination", 1.0)) * (ability - b))
        gold = env.task.answer
        return gold if self.rng.random() < p else _wrong(gold, self.rng)

    def revise(self, own: str, peers: dict[str, str]) -> str:
        if self.options.get("revise", self.revise_style) != "follow" or not peers:
            return own
        return majority(own, list(peers.values()))


class Stubborn(Noisy):
    """A noisy solver that never changes its initial answer."""

    def revise(self, own: str, peers: dict[str, str]) -> str:
        return own


class Follower(Noisy):
    """A noisy solver that adopts the majority of its peers' answers."""

    revise_style = "follow"


def majority(own: str, peers: list[str]) -> str:
    """The most common peer answer (by normalised value); ties prefer `own`, then agent order."""
    counts = Counter(normalize_answer(p) for p in peers)
    top = max(counts.values())
    tied = [p for p in peers if counts[normalize_answer(p)] == top]
    return own if normalize_answer(own) in {normalize_answer(t) for t in tied} else tied[0]


def _wrong(gold: str, rng: Any) -> str:
    """A plausible wrong answer: the gold number shifted by a small non-zero offset."""
    value = parse_number(gold)
    offset = int(rng.choice([-3, -2, -1, 1, 2, 3]))
    if value is None:
        return f"{gold} + {abs(offset)}"
    wrong = value + offset
    return str(wrong) if wrong.denominator == 1 else str(Fraction(wrong))


def _message(phase: str, answer: str) -> str:
    text = {
        "independent": "I work through the question step by step.",
        "sharing": "My approach: follow each step of the story and track the running count.",
        "analysis": "I checked the other ideas against my own computation.",
        "fusion": "Having weighed the discussion, my final answer follows.",
    }.get(phase, "")
    return f"{text}\n<answer>{answer}</answer>"


# ---- reward attacks (each must lose to `noisy`; tests/debate/test_hacks.py) ----------------

_NUMBERS = re.compile(r"\d+")


def _question_numbers(env: Any) -> list[str]:
    return _NUMBERS.findall(env.task.question) or ["0"]


class HackCopyPeer(ScriptedPolicy):
    """Attack: never solve; answer phase 0 with the question's first number (well-formed, so
    no format penalty), then repeat the first peer's current answer verbatim."""

    ceiling = Ceiling("noisy", margin=-0.2, metrics=("mean_reward", "success_rate"),
                      why="copying pays only what the peers solved; copiers together solve nothing")

    def act(self, env: Any, messages: list[Message]) -> str:
        peers = peer_answers(messages)
        answer = next(iter(peers.values())) if peers else _question_numbers(env)[0]
        return f"I agree with my partner.\n<answer>{answer}</answer>"


class HackMultipleAnswers(ScriptedPolicy):
    """Attack: no reasoning and no <answer> tag, only a `\\boxed{}` for every number in the
    question and every sum and difference of two of them, hoping the grader credits any."""

    ceiling = Ceiling("noisy", margin=-0.2, metrics=("mean_reward", "success_rate"),
                      why="several different boxed answers are no answer (format penalty)")

    def act(self, env: Any, messages: list[Message]) -> str:
        nums = [int(n) for n in _question_numbers(env)]
        cands = dict.fromkeys([*nums, *(a + b for a in nums for b in nums),
                               *(a - b for a in nums for b in nums if a > b)])
        return " ".join(f"\\boxed{{{c}}}" for c in cands)

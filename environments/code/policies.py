"""Scripted baselines for CodeRefine: `oracle`, `refiner`, `random`.

`oracle` and `refiner` read the problem's programs (privileged), which is what makes them
sanity checks: the oracle proves the judge accepts the reference (on user data: the dataset's
first Python 3 or C++ solution), the refiner walks the whole refinement loop — a wrong program
first, the feedback, then the fix, then a skeptical re-check and the submission.
"""

from __future__ import annotations

import json
from typing import Any

from envgym.scripted import ScriptedPolicy
from envgym.spaces import Message

__all__ = ["OraclePolicy", "RandomPolicy", "RefinerPolicy", "program_turn"]

FENCE_NAME = {"python": "python", "cpp": "cpp"}
FALLBACK_WRONG = ("python", "print(0)\n")


def program_turn(language: str, code: str, submit: bool = False, tool_format: str = "tag") -> str:
    """An assistant turn carrying `code` (run on the public tests, or submitted)."""
    if tool_format == "json":
        return "<tool_call>" + json.dumps({"name": "submit" if submit else "run", "arguments": {
            "code": code, "language": language}}) + "</tool_call>"
    return f"```{FENCE_NAME[language]}\n{code}\n```\n" + ("<submit></submit>" if submit else "")


def submit_turn(tool_format: str = "tag") -> str:
    return ('<tool_call>{"name": "submit", "arguments": {}}</tool_call>' if tool_format == "json"
            else "<submit></submit>")


class OraclePolicy(ScriptedPolicy):
    """Submits the reference solution straight away."""

    def act(self, env: Any, messages: list[Message]) -> str:
        found = env.problem.solution("solutions")
        if found is None:
            return submit_turn(env.tool_format)  # no known solution: an honest failure
        return program_turn(*found, True, env.tool_format)


class RefinerPolicy(ScriptedPolicy):
    """Wrong program first; after the feedback, the fix; after the skeptical prompt, submit."""

    def __init__(self, seed: int = 0, **options: Any):
        super().__init__(seed, **options)
        self.step = 0

    def act(self, env: Any, messages: list[Message]) -> str:
        self.step += 1
        fmt = env.tool_format
        if self.step == 1:
            language, code = env.problem.solution("wrong_solutions") or FALLBACK_WRONG
            return program_turn(language, code, False, fmt)
        if self.step == 2:
            found = env.problem.solution("solutions")
            if found is not None:
                return program_turn(*found, False, fmt)
        return submit_turn(fmt)


GARBAGE = [
    "I think the answer is 42.",
    "```python\ndef solve(:\n    pass\n```",
    "```cpp\nint main() { return 0 }\n```",
    "```python\nimport random\nprint(random.randint(0, 10))\n```\n<submit></submit>",
    "<run>1 2 3</run>",
    "```ruby\nputs 1\n```",
    "<submit></submit>",
    "```python\nraise SystemExit(3)\n```",
]


class RandomPolicy(ScriptedPolicy):
    """Garbage text, broken programs, or programs that ignore the input."""

    def act(self, env: Any, messages: list[Message]) -> str:
        return GARBAGE[int(self.rng.integers(len(GARBAGE)))]

"""Scripted baselines for CodeRefine: `oracle`, `refiner`, `random`.

`oracle` and `refiner` read the problem's programs (privileged), which is what makes them
sanity checks: the oracle proves the judge accepts the reference (on user data: the dataset's
first Python 3 or C++ solution), the refiner walks the whole refinement loop — a wrong program
first, the feedback, then the fix, then a skeptical re-check and the submission.

The `hack_*` policies try to pass the hidden tests without solving the problem (read the test
files off the disk, replay the public outputs, guess a constant); each must earn nothing.
"""

from __future__ import annotations

import json
from typing import Any

from envgym.hacks import Ceiling
from envgym.scripted import ScriptedPolicy
from envgym.spaces import Message

__all__ = ["HackGuessPolicy", "HackHardcodePolicy", "HackReadTestsPolicy", "OraclePolicy",
           "RandomPolicy", "RefinerPolicy", "program_turn"]

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


# ---- hacks: pass the hidden tests without solving the problem (`envgym check` runs them) ----

# Looks for problem data where an install, a checkout or a dataset would put it, and prints
# the output of the test whose input is this run's stdin.
READER = r"""import glob, json, os, site, sys, time
want = sys.stdin.read().strip()
deadline = time.time() + 0.4
roots = [os.getcwd(), *sys.path, *site.getsitepackages(), site.getusersitepackages(),
         *glob.glob("/usr/lib/python3*/*-packages"),
         *glob.glob("/usr/local/lib/python3*/*-packages"),
         os.path.expanduser("~"), "/work", "/home", "/root", "/opt", "/srv", "/tmp", "/usr/local",
         "/var/lib", "/usr/share"]

def tests_in(path):
    with open(path, errors="ignore") as fh:
        text = fh.read(50_000_000)
    if "_tests" not in text:
        return
    for line in [text, *text.splitlines()]:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        for r in rec if isinstance(rec, list) else [rec]:
            if isinstance(r, dict):
                for key in ("hidden_tests", "public_tests", "private_tests", "tests"):
                    yield from r.get(key) or []

def search():
    for root in roots:
        for d, dirs, files in os.walk(root):
            if time.time() > deadline:
                return None
            for name in files:
                if name.endswith((".jsonl", ".json")):
                    try:
                        for t in tests_in(os.path.join(d, name)):
                            if isinstance(t, dict) and str(t.get("input", "")).strip() == want:
                                return t["output"]
                    except (OSError, UnicodeError):
                        pass
    return None

found = search()
sys.stdout.write(found if found is not None else "0\n")
"""
# Bounded against the honest refiner on reward (as every ceiling is) and, absolutely, at no
# success and no reward: `random` would be a poor baseline here, its malformed turns cost it
# format penalties, so "not above random" would demand a hack lose reward it never risked.
_NOTHING = Ceiling("refiner", metrics=("mean_reward",),
                   caps=(("mean_reward", 0.0), ("success_rate", 0.0)),
                   why="no hidden test may pass without a solution, and no shaping may pay one")


class HackReadTestsPolicy(ScriptedPolicy):
    """Submits a program that searches the filesystem for the hidden tests."""

    ceiling = _NOTHING

    def act(self, env: Any, messages: list[Message]) -> str:
        return program_turn("python", READER, True, env.tool_format)


def _public_table(env: Any) -> dict[str, str]:
    return {t["input"].strip(): t["output"] for t in env.problem.public_tests}


class HackHardcodePolicy(ScriptedPolicy):
    """Replays the public outputs by input (passing every public test), else the most common
    public output; refines nothing and submits after the skeptical prompt."""

    ceiling = _NOTHING

    def act(self, env: Any, messages: list[Message]) -> str:
        if sum(m["role"] == "assistant" for m in messages):
            return submit_turn(env.tool_format)
        table = _public_table(env)
        common = max(table.values(), key=list(table.values()).count, default="0\n")
        code = (f"import sys\ntable = {table!r}\n"
                f"sys.stdout.write(table.get(sys.stdin.read().strip(), {common!r}))\n")
        return program_turn("python", code, False, env.tool_format)


class HackGuessPolicy(ScriptedPolicy):
    """Prints one guess for every input: the first public output, or a common answer."""

    ceiling = _NOTHING
    GUESSES = ("0\n", "1\n", "YES\n", "-1\n")

    def act(self, env: Any, messages: list[Message]) -> str:
        outputs = [t["output"] for t in env.problem.public_tests]
        guess = outputs[0] if outputs and self.rng.random() < 0.5 else \
            self.GUESSES[int(self.rng.integers(len(self.GUESSES)))]
        return program_turn("python", f"import sys\nsys.stdout.write({guess!r})\n", True,
                            env.tool_format)

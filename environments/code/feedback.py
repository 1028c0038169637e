"""What the agent reads: the opening prompt and the execution feedback.

Only public tests are ever rendered with their expected output; hidden tests appear in no
message (the hacking tests check this).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .problems import Problem

__all__ = ["Attempt", "DEFAULT_SKEPTICAL_PROMPT", "SYSTEM_PROMPT", "TestView", "problem_prompt",
           "render_attempt", "render_custom"]

SHOW = 600  # characters of any output or input shown back

SYSTEM_PROMPT = """You solve competitive-programming problems in Python 3 or C++17. Programs read \
standard input and write standard output.

Each turn, write your complete program in one fenced block (```python or ```cpp), then at most \
one command:
- <run></run> runs it on the public examples (the default when you write a new program);
- <run>CUSTOM INPUT</run> also runs it on input you choose;
- <submit></submit> submits your latest program; it is judged on hidden tests and the episode ends.
You may improve your program for at most {max_rounds} attempts."""

JSON_SYSTEM_PROMPT = """You solve competitive-programming problems in Python 3 or C++17. Programs \
read standard input and write standard output.
{tools}
`run` tests a program on the public examples (or on `stdin` you give); `submit` sends it to the \
hidden tests and ends the episode. You may improve your program for at most {max_rounds} attempts."""

DEFAULT_SKEPTICAL_PROMPT = (
    "All public tests pass, but public tests are weak. Be skeptical: re-examine your solution "
    "against the constraints — edge cases (minimum sizes, equal or negative values, empty "
    "answers), integer ranges, and whether the complexity fits the limits. If you find a flaw, "
    "write a corrected program; if you are confident, reply <submit></submit>.")


def _cut(text: str, limit: int = SHOW) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


def problem_prompt(problem: Problem) -> str:
    parts = [f"# {problem.title}" if problem.title else "", problem.statement.strip(),
             f"Time limit: {problem.time_limit_s:g} s per test. Memory limit: {problem.memory_mb} MB."]
    for i, test in enumerate(problem.public_tests, 1):
        parts.append(f"Example {i} input:\n```\n{_cut(test['input'], 2000)}```\n"
                     f"Example {i} output:\n```\n{_cut(test['output'], 2000)}```")
    return "\n\n".join(p for p in parts if p)


@dataclass
class TestView:
    verdict: str
    time_s: float
    stdin: str
    expected: str
    stdout: str
    stderr: str
    message: str = ""


@dataclass
class Attempt:
    """One program evaluated on the public tests."""

    round: int
    language: str
    verdict: str
    passed: int
    total: int
    compile_output: str = ""
    tests: list[TestView] = field(default_factory=list)

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total

    @property
    def fraction(self) -> float:
        return self.passed / self.total if self.total else 0.0


def render_attempt(a: Attempt, max_rounds: int) -> str:
    """No run times: they vary from run to run, and an observation that does breaks the
    same-seed-same-actions replay (`envgym check`'s determinism); TLE names the limit's breach."""
    lines = [f"Attempt {a.round}/{max_rounds} ({a.language}): {a.passed}/{a.total} public tests "
             f"passed; verdict {a.verdict}."]
    if a.verdict == "CE":
        lines.append("Compilation failed:\n```\n" + _cut(a.compile_output, 1500) + "\n```")
    for i, t in enumerate(a.tests, 1):
        lines.append(f"Test {i}: {t.verdict}" + (f" — {t.message}" if t.message
                                                  and t.verdict != "AC" else ""))
        if t.verdict != "AC":
            lines.append(f"input:\n```\n{_cut(t.stdin)}```\nexpected:\n```\n{_cut(t.expected)}```\n"
                         f"your output:\n```\n{_cut(t.stdout)}\n```")
        if t.stderr.strip():
            lines.append("stderr:\n```\n" + _cut(t.stderr.strip(), 800) + "\n```")
    return "\n".join(lines)


def render_custom(stdin: str, verdict: str, stdout: str, stderr: str) -> str:
    text = (f"Custom run: {verdict}\ninput:\n```\n{_cut(stdin)}```\n"
            f"output:\n```\n{_cut(stdout)}\n```")
    if stderr.strip():
        text += "\nstderr:\n```\n" + _cut(stderr.strip(), 800) + "\n```"
    return text

"""`envgym/CodeRefine-v0`: write, run, refine and submit a competitive-programming solution.

RefineRL's Skeptical-Agent loop (methods.md §3): the agent writes a program, the environment
runs it on the public examples and shows per-test verdicts, its output against the expected
one, stderr and time; the agent refines and finally submits, and the submission is judged on
hidden tests it never sees. In skeptical mode (default) passing every public test does not end
the episode: the agent is asked to re-examine the program and either submit or refine, for at
most `max_rounds` programs. With `skeptical=False` the first program that passes the public
tests is submitted automatically (the ablation).

Reward components: `pass` (terminal: 1/0 all hidden tests pass, or the fraction with
`reward="fraction"`), `format` and `tool` (malformed turns, commands without a program),
and optionally `progress` (progress_coef != 0), kept separate for turn-level credit.

Progress pays only for progress that generalises. RefineRL publishes no per-turn reward
(methods.md §3.2); the obvious one, the change of the *public* pass fraction, pays a program
that replays the public outputs by input (0.5 per episode at progress_coef = 0.5 with no
hidden test passed). Here `progress` is potential-based shaping whose potential is
Phi(program) = min(public pass fraction, the `pass` score that program would get if submitted),
so each new program earns progress_coef * (Phi_now - Phi_before), and the episode settles at
its end: a submission earns the shaping up to min(Phi, its own score), an episode that ends
unsubmitted gives it all back. Over an episode progress sums to progress_coef * Phi of the
submission, never more than progress_coef * `pass`: the shaping only moves credit for the
hidden-test outcome onto the turns that made it, and a program that passes no hidden test
earns none of it, at any progress_coef. The cost is one hidden-test judgement per new program
(fail-fast in binary mode) while progress_coef != 0.

Isolation. Programs are model-written, so the environment refuses a sandbox backend that is
no security boundary (the hidden tests are package data a program could read off the disk):
install bubblewrap or use `backend="docker"`, or pass `allow_unsafe_sandbox=True` (or set
ENVGYM_ALLOW_UNSAFE_SANDBOX=1) to run unisolated on purpose. The bwrap backend shows a
program the interpreter, its standard library and the compiler toolchain only.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from envgym.core import StepResult, TextEnv, system, user
from envgym.errors import InvalidConfig, SandboxUnavailable
from envgym.resources import file_key, shared
from envgym.sandbox import Execution, Judgement, Limits, compare, get_backend, judge
from envgym.sandbox.backends import UNSAFE_ENV, unsafe_allowed
from envgym.tools import ToolCallError, render_tools

from .actions import TOOLS, parse_action
from .feedback import (DEFAULT_SKEPTICAL_PROMPT, JSON_SYSTEM_PROMPT, SYSTEM_PROMPT, Attempt,
                       TestView, problem_prompt, render_attempt, render_custom)
from .metrics import summarize_outcomes
from .problems import Problem, load_problems
from .rules import RULES

__all__ = ["CodeRefineEnv"]


def _isolating(backend: Any, allow_unsafe: bool) -> Any:
    """The episode runs model-written programs: refuse a backend that is no security boundary
    (it could read the hidden tests off the disk) unless the user explicitly allows it."""
    if backend.isolated or allow_unsafe or unsafe_allowed():
        return backend
    raise SandboxUnavailable(
        f"CodeRefine-v0 runs untrusted programs, and the {backend.name!r} sandbox backend does "
        "not isolate them (a program could read the hidden tests). Install bubblewrap "
        "(`apt-get install bubblewrap`) or use backend='docker'; to run unisolated anyway, "
        f"pass allow_unsafe_sandbox=True or set {UNSAFE_ENV}=1.")


class CodeRefineEnv(TextEnv):
    """One problem per episode; see the module docstring for the protocol and rewards."""

    tools = TOOLS
    shared_resources = ("problems", "_backend")
    uses_sandbox = True  # constructing it probes a sandbox backend (see agents/tiny.py)

    def __init__(self, *, dataset: str | None = None, dataset_format: str = "auto",
                 split: str = "train", problems: list[Problem] | None = None,
                 skeptical: bool = True, max_rounds: int = 4, reward: str = "binary",
                 progress_coef: float = 0.0, tool_format: str = "tag", backend: str = "auto",
                 skeptical_prompt: str | None = None, hidden_fail_fast: bool = True,
                 judge_every_attempt: bool = False, max_stdin_chars: int = 20_000,
                 max_turns: int | None = None, max_invalid_actions: int = 3,
                 allow_unsafe_sandbox: bool = False, **kwargs: Any):
        if max_rounds < 1:
            raise InvalidConfig(f"max_rounds must be >= 1, got {max_rounds}")
        if reward not in ("binary", "fraction"):
            raise InvalidConfig(f"reward must be 'binary' or 'fraction', got {reward!r}")
        if tool_format not in ("tag", "json"):
            raise InvalidConfig(f"tool_format must be 'tag' or 'json', got {tool_format!r}")
        super().__init__(max_turns=max_turns or 3 * max_rounds + 2,
                         max_invalid_actions=max_invalid_actions, **kwargs)
        self.problems = problems if problems is not None else shared(
            ("code", "problems", file_key(dataset), dataset_format, split),
            lambda: load_problems(dataset, dataset_format, split))  # once per process
        self._backend = _isolating(get_backend(backend), allow_unsafe_sandbox)
        self.skeptical, self.max_rounds, self.reward_mode = skeptical, max_rounds, reward
        self.progress_coef, self.tool_format = progress_coef, tool_format
        self.skeptical_prompt = skeptical_prompt or DEFAULT_SKEPTICAL_PROMPT
        self.hidden_fail_fast, self.judge_every_attempt = hidden_fail_fast, judge_every_attempt
        self.max_stdin_chars = max_stdin_chars
        self.problem: Problem | None = None

    # ---- episode ------------------------------------------------------------------------------

    def _reset(self, seed: int, options: dict[str, Any]):
        self.problem = self._pick(seed, options)
        self.task_id = self.problem.id
        self.code: str | None = None
        self.language: str | None = None
        self.attempts: list[Attempt] = []
        self.first_hidden: Judgement | None = None
        self.sandbox_s = 0.0
        self._hidden_cache: dict[str, Judgement] = {}
        self.potential = 0.0  # Phi of the latest program (see the module docstring)
        if self.tool_format == "json":
            prompt = JSON_SYSTEM_PROMPT.format(tools=render_tools(TOOLS, "json"),
                                               max_rounds=self.max_rounds)
        else:
            prompt = SYSTEM_PROMPT.format(max_rounds=self.max_rounds)
        obs = [system(prompt), user(problem_prompt(self.problem))]
        return obs, {"difficulty": self.problem.difficulty, "skeptical": self.skeptical}

    @classmethod
    def task_ids(cls, kwargs: dict[str, Any]) -> list[str] | None:
        """The ordered pool `seed % N` picks from (config validation compares train and eval
        pools by id); None for a Hub dataset, which is not fetched just to check."""
        dataset = kwargs.get("dataset")
        if dataset is not None and not Path(dataset).exists():
            return None
        fmt, split = kwargs.get("dataset_format", "auto"), kwargs.get("split", "train")
        problems = shared(("code", "problems", file_key(dataset), fmt, split),
                          lambda: load_problems(dataset, fmt, split))
        return [p.id for p in problems]

    def _pick(self, seed: int, options: dict[str, Any]) -> Problem:
        wanted = options.get("task_id") or options.get("problem_id")
        if wanted is None:
            return self.problems[seed % len(self.problems)]
        for problem in self.problems:
            if problem.id == wanted:
                return problem
        raise InvalidConfig(f"no problem with id {wanted!r}; ids look like {self.problems[0].id!r}")

    def _step(self, action: str) -> StepResult:
        try:
            act = parse_action(action, self.tool_format)
        except ToolCallError as e:
            return self.invalid(str(e))
        new_program = act.code is not None and (act.code, act.language) != (self.code, self.language)
        if act.code is not None:
            self.code, self.language = act.code, act.language
        if self.code is None:
            return self._misuse(f"`{act.command}` needs a program; write one in a ```python or "
                                "```cpp block first.")
        if act.stdin is not None and len(act.stdin) > self.max_stdin_chars:
            return self._misuse(f"custom input has {len(act.stdin)} characters; the limit is "
                                f"{self.max_stdin_chars}.")
        if act.command == "submit":
            return self._submit("explicit", [])
        return self._evaluate(new_program, act.stdin)

    def _misuse(self, error: str) -> StepResult:
        penalty = float(RULES["tool_penalty"]) if RULES.on("tool_penalty") else 0.0
        return StepResult([user(f"Invalid action: {error}")], {"tool": penalty}, parse_error=error)

    # ---- running programs ---------------------------------------------------------------------

    def _limits(self) -> Limits:
        return Limits(time_s=self.problem.time_limit_s, memory_mb=max(256, self.problem.memory_mb))

    def _run_public(self, stdin: str | None) -> tuple[Attempt, str | None]:
        """Build once, run every public test (and the custom input); compare on the host."""
        limits, start = self._limits(), time.perf_counter()
        built = self._backend.build(self.code, self.language, limits)
        round_no = len(self.attempts) + 1
        tests = self.problem.public_tests
        if isinstance(built, Execution):
            self.sandbox_s += time.perf_counter() - start
            verdict = built.verdict.value
            return Attempt(round_no, self.language, verdict, 0, len(tests),
                           compile_output=built.stderr or built.message), None
        try:
            views = [self._view(built, t["input"], t["output"], limits) for t in tests]
            custom = None
            if stdin is not None:
                ex = self._backend.execute(built, stdin, limits)
                custom = render_custom(stdin, ex.verdict.value, ex.stdout, ex.stderr)
        finally:
            built.cleanup()
            self.sandbox_s += time.perf_counter() - start
        failing = [v.verdict for v in views if v.verdict != "AC"]
        attempt = Attempt(round_no, self.language, failing[0] if failing else "AC",
                          len(views) - len(failing), len(views), tests=views)
        return attempt, custom

    def _view(self, built: Any, stdin: str, expected: str, limits: Limits) -> TestView:
        ex = self._backend.execute(built, stdin, limits)
        verdict, why = ex.verdict.value, ex.message
        if verdict == "AC":
            ok, why = compare(expected, ex.stdout)
            verdict = "AC" if ok else "WA"
        return TestView(verdict, ex.wall_time, stdin, expected, ex.stdout, ex.stderr, why)

    def _judge_hidden(self) -> Judgement:
        key = hashlib.sha1(f"{self.language}\0{self.code}".encode()).hexdigest()
        if key not in self._hidden_cache:
            start = time.perf_counter()
            stop = self.hidden_fail_fast and self.reward_mode == "binary"
            self._hidden_cache[key] = judge(self.code, self.language, self.problem.hidden_tests,
                                            self._limits(), backend=self._backend,
                                            stop_on_first_failure=stop)
            self.sandbox_s += time.perf_counter() - start
        return self._hidden_cache[key]

    # ---- turn outcomes ------------------------------------------------------------------------

    def _evaluate(self, new_program: bool, stdin: str | None) -> StepResult:
        if not new_program and self.attempts and stdin is None:
            text = ("Your program is unchanged; its last result:\n"
                    + render_attempt(self.attempts[-1], self.max_rounds))
            return StepResult([user(text + "\n" + self._next_hint(self.attempts[-1]))])
        if not new_program and self.attempts:
            _, custom = self._run_public(stdin)
            return StepResult([user(custom)])
        attempt, custom = self._run_public(stdin)
        if attempt.verdict == "SE":
            return StepResult([user("The sandbox failed (not your fault); run again.")],
                              info={"sandbox_error": True})
        previous = self.attempts[-1].fraction if self.attempts else 0.0
        self.attempts.append(attempt)
        info: dict[str, Any] = {"public_verdict": attempt.verdict, "public_passed": attempt.passed,
                                "public_total": attempt.total,
                                "public_pass_delta": attempt.fraction - previous}
        components: dict[str, float] = {}
        if self.progress_coef:
            potential = self._potential(attempt)
            components["progress"] = self.progress_coef * (potential - self.potential)
            self.potential = potential
        if len(self.attempts) == 1 or self.judge_every_attempt:
            hidden = self._judge_hidden()
            self.first_hidden = self.first_hidden or hidden
            if self.judge_every_attempt:
                info["hidden_attempt"] = {"verdict": hidden.verdict.value, "passed": hidden.passed}
        messages = [render_attempt(attempt, self.max_rounds)] + ([custom] if custom else [])
        if attempt.all_passed and not self.skeptical:
            return self._submit("auto", messages, components, info)
        if len(self.attempts) >= self.max_rounds:
            messages.append("That was your last attempt; it is submitted.")
            return self._submit("budget", messages, components, info)
        messages.append(self._next_hint(attempt))
        return StepResult([user("\n\n".join(messages))], components, info=info)

    def _next_hint(self, attempt: Attempt) -> str:
        left = self.max_rounds - len(self.attempts)
        if attempt.all_passed:
            return f"{self.skeptical_prompt} ({left} attempts left.)"
        return (f"Fix your program and try again ({left} attempts left), "
                "or <submit></submit> it as it is.")

    def _submit(self, how: str, messages: list[str], components: dict[str, float] | None = None,
                info: dict[str, Any] | None = None) -> StepResult:
        result = self._judge_hidden()
        if self.first_hidden is None:
            self.first_hidden = result
        score = self._score(result)
        components = {**(components or {}), "pass": score}
        if self.progress_coef and self.potential > score and RULES.on("settle_on_submit"):
            # shaping never exceeds the outcome
            components["progress"] = components.get("progress", 0.0) + self._settle(score)
        messages = messages + [f"Submitted. Hidden tests: {result.verdict.value}."]
        outcome = self._outcome(result, score, how)
        info = {**(info or {}), "outcome": outcome, "hidden_verdict": result.verdict.value}
        return StepResult([user("\n\n".join(messages))], components, terminated=True, info=info)

    def _score(self, result: Judgement) -> float:
        """The `pass` reward a submission judged `result` earns."""
        if self.reward_mode == "binary":
            return 1.0 if result.accepted else 0.0
        return result.fraction_passed

    def step(self, action: str):
        """`TextEnv.step`, plus the settlement of an episode that ends unsubmitted: the
        progress shaping it was paid is taken back, since no submission earned it."""
        obs, reward, terminated, truncated, info = super().step(action)
        if truncated and not terminated and self.progress_coef and self.potential \
                and RULES.on("settle_unsubmitted"):
            parts = info["reward_components"]
            parts["progress"] = parts.get("progress", 0.0) + self._settle(0.0)
            reward = float(sum(parts.values()))
        return obs, reward, terminated, truncated, info

    def _potential(self, attempt: Attempt) -> float:
        """Phi: the public pass fraction, capped by what submitting the program would earn."""
        if not RULES.on("progress_capped_by_hidden"):
            return attempt.fraction
        return min(attempt.fraction, self._score(self._judge_hidden()))

    def _settle(self, score: float) -> float:
        """The progress that takes the episode's shaping down to progress_coef * score."""
        settle = self.progress_coef * (score - self.potential)
        self.potential = score
        return settle

    def _outcome(self, result: Judgement | None, score: float, how: str) -> dict[str, Any]:
        first = self.first_hidden
        return {
            "success": bool(result is not None and result.accepted), "score": score,
            "verdict": result.verdict.value if result else "none",
            "passed": result.passed if result else 0,
            "total": len(self.problem.hidden_tests),
            "first_attempt_pass": bool(first is not None and first.accepted),
            "final_pass": bool(result is not None and result.accepted),
            "rounds": len(self.attempts), "submitted": how,
            "public_pass": self.attempts[-1].fraction if self.attempts else 0.0,
            "sandbox_error": bool(result is not None and result.verdict.value == "SE"),
            "sandbox_s": round(self.sandbox_s, 4), "task_id": self.task_id,
            "difficulty": self.problem.difficulty, "language": self.language or "none",
        }

    def _outcome_on_truncation(self) -> dict[str, Any]:
        return self._outcome(None, 0.0, "none")

    def _state(self) -> Any:
        code = hashlib.sha1(f"{self.language}\0{self.code}".encode()).hexdigest()[:12] \
            if self.code else None
        last = self.attempts[-1] if self.attempts else None
        return {"task": self.task_id, "rounds": len(self.attempts), "code": code,
                "public": [last.verdict, last.passed] if last else None}

    @classmethod
    def summarize(cls, outcomes: list[dict[str, Any]]) -> dict[str, float]:
        return summarize_outcomes(outcomes)

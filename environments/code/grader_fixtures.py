"""Grader fixtures for CodeRefine-v0: what the hidden-test judge and the progress shaping decide.

Each case plays programs on one problem (seed 0 of whatever pool the checked arguments give)
and pins the judgement: the reference solution passes, programs that exit early, replay the
public outputs, guess a constant or search the disk pass nothing, and the `progress` shaping
(pinned at several `progress_coef`, whatever the checked config uses) pays only what a
submission's hidden-test outcome backs: replaying the public outputs earns no progress on the
turn it runs, a regression submitted after a correct program gives the shaping back, and so
does an episode that ends unsubmitted. Deleting the gate or the settlement from the
environment makes one of these fail.
"""

from __future__ import annotations

from typing import Any

from envgym.graders import GraderCase, Ordering

from .policies import FALLBACK_WRONG, READER, program_turn, submit_turn

COEFS = (0.5, 2.0)  # the documented progress_coef, and a large one


def _solution(env: Any, history: list, info: dict) -> str:
    found = env.problem.solution("solutions")
    return program_turn(*(found or FALLBACK_WRONG), False, env.tool_format)


def _submit_solution(env: Any, history: list, info: dict) -> str:
    found = env.problem.solution("solutions")
    return program_turn(*(found or FALLBACK_WRONG), True, env.tool_format)


def _wrong(env: Any, history: list, info: dict) -> str:
    language, code = env.problem.solution("wrong_solutions") or FALLBACK_WRONG
    return program_turn(language, code, False, env.tool_format)


def _submit_wrong(env: Any, history: list, info: dict) -> str:
    return program_turn(*FALLBACK_WRONG, True, env.tool_format)


def _replay_public(env: Any, history: list, info: dict) -> str:
    """A program that prints each public example's output for its input, else the first."""
    table = {t["input"].strip(): t["output"] for t in env.problem.public_tests}
    default = next(iter(table.values()), "0\n")
    code = (f"import sys\ntable = {table!r}\n"
            f"sys.stdout.write(table.get(sys.stdin.read().strip(), {default!r}))\n")
    return program_turn("python", code, False, env.tool_format)


def _submit(env: Any, history: list, info: dict) -> str:
    return submit_turn(env.tool_format)


def _submit_code(language: str, code: str):
    return lambda env, history, info: program_turn(language, code, True, env.tool_format)


def _junk(env: Any, history: list, info: dict) -> str:
    return "I will think about it some more."


NOTHING = {"component.pass": (0.0, 0.0), "info.success": (0.0, 0.0)}


def _judge_cases() -> list[GraderCase]:
    return [
        GraderCase("reference solution passes", (_submit_solution,),
                   {"component.pass": (1.0, 1.0), "terminated": (1.0, 1.0)},
                   why="the judge accepts the problem's own solution"),
        GraderCase("exit(0) before output fails",
                   (_submit_code("python", "import sys\nsys.exit(0)"),),
                   {"component.pass": (0.0, 0.0), "terminated": (1.0, 1.0)},
                   why="an empty output with exit status 0 is a wrong answer, not a pass"),
        GraderCase("constant output fails", (_submit_code("python", "print(0)"),),
                   {"component.pass": (0.0, 0.0)}, why="a guess is not a solution"),
        GraderCase("reading the tests off the disk fails", (_submit_code("python", READER),),
                   {"component.pass": (0.0, 0.0)},
                   why="the sandbox shows a program no test data"),
        GraderCase("submitting before writing a program costs the tool penalty", (_submit,),
                   {"component.tool": (-0.1, -0.1), "component.pass": (0.0, 0.0)},
                   why="a command without a program is a misuse of the tools: -0.1"),
        GraderCase("public replay submitted fails", (_replay_public, _submit),
                   {"component.pass": (0.0, 0.0), "reward": (-1.0, 0.0)},
                   why="passing the public examples by table is not passing the hidden tests"),
    ]


# A dataset row whose other tests repeat its shown example (as TACO and one-test APPS rows do).
SHOWN_ONLY = {"id": "shown-only", "statement": "Print the sum of two integers.",
              "public_tests": [{"input": "1 2\n", "output": "3\n"}],
              "hidden_tests": [{"input": "1 2\n", "output": "3\n"}]}
SAME_OUTPUT = {**SHOWN_ONLY, "id": "same-output",
               "hidden_tests": [{"input": "2 1\n", "output": "3\n"},
                                {"input": "0 3", "output": "3"}]}
MIXED = {**SHOWN_ONLY, "id": "mixed",
         "hidden_tests": [*SHOWN_ONLY["hidden_tests"], {"input": "2 5\n", "output": "7\n"}]}


def _replay_row(make_env: Any) -> dict[str, float]:
    """Load both rows, then submit a replay of the shown output on what is left of them."""
    from envgym.errors import DatasetError

    from .loaders import parse_records

    try:
        problems = parse_records([SHOWN_ONLY, SAME_OUTPUT, MIXED], "envgym")
    except DatasetError:
        problems = []
    out = {"loaded": float(len(problems))}
    env = make_env(problems=problems, reward="fraction") if problems else None
    if env is not None:
        env.reset(seed=0)
        *_, info = env.step(program_turn("python", "print(3)", True, env.tool_format))
        out["replay_score"] = float(info["outcome"]["score"])
        env.close()
    return out


def _shown_cases() -> list[GraderCase]:
    return [GraderCase("a replay of the shown example passes no hidden test", play=_replay_row,
                       expect={"loaded": (1.0, 1.0), "replay_score": (0.0, 0.0)},
                       why="only tests the agent has not seen verify a solution: a row whose "
                           "only test is its example, or whose hidden tests all expect the "
                           "shown output, is not loaded, and the example is not judged in "
                           "the other")]


def _progress_cases(coef: float) -> list[GraderCase | Ordering]:
    kw = {"progress_coef": coef, "reward": "binary", "skeptical": True, "max_rounds": 4}
    honest = GraderCase(f"wrong then fixed, coef {coef}", (_wrong, _solution, _submit),
                        {"component.progress": (coef, coef), "component.pass": (1.0, 1.0)},
                        env_kwargs=kw, why="progress that the hidden tests confirm is paid")
    replay = GraderCase(f"public replay, coef {coef}", (_replay_public, _submit),
                        {"component.progress": (0.0, 0.0), "reward": (-1.0, 0.0)},
                        env_kwargs=kw, why="replaying public outputs earns no shaping")
    return [
        honest, replay,
        GraderCase(f"public replay run earns no progress, coef {coef}", (_replay_public,),
                   {"component.progress": (0.0, 0.0), "info.public_pass_delta": (1.0, 1.0)},
                   env_kwargs=kw,
                   why="the gate: all public tests pass, no hidden test does, nothing is paid"),
        GraderCase(f"fixed then regressed, coef {coef}", (_solution, _submit_wrong),
                   {"component.progress": (0.0, 0.0), "component.pass": (0.0, 0.0)},
                   env_kwargs=kw, why="the submission settles the shaping to what it earns"),
        GraderCase(f"fixed but never submitted, coef {coef}", (_solution, _junk, _junk, _junk),
                   {"component.progress": (0.0, 0.0), "reward": (-1.0, 0.0)},
                   env_kwargs=kw, why="an episode that ends unsubmitted gives the shaping back"),
        Ordering(f"fixing beats replaying, coef {coef}", honest, replay, margin=0.5,
                 why="the honest refinement out-earns the public replay by its pass reward"),
    ]


def fixtures() -> list[GraderCase | Ordering]:
    cases: list[GraderCase | Ordering] = [*_judge_cases(), *_shown_cases()]
    for coef in COEFS:
        cases += _progress_cases(coef)
    return cases

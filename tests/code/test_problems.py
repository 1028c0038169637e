"""The shipped problem set: shape, reproducible generators, and every reference/wrong program
judged by the real sandbox."""

import random
from pathlib import Path

import pytest

from envgym.environments.code import build_problems
from envgym.sandbox import Limits, judge_many

CATEGORIES = ["implementation", "greedy", "sorting", "prefix sums", "two pointers", "binary search",
              "bfs/dfs", "shortest paths", "dp", "number theory", "strings"]
CPP_SUBSET = ["range_span", "tree_diameter", "isqrt"]


def _subs(problems, kind, lang, tests="all"):
    out = []
    for p in problems:
        cases = p.hidden_tests + p.public_tests if tests == "all" else p.hidden_tests
        out.append({"source": getattr(p, kind)[lang][0], "language": lang, "tests": cases,
                    "limits": Limits(time_s=p.time_limit_s, memory_mb=max(256, p.memory_mb))})
    return out


def test_problem_set_shape(problems):
    assert len(problems) >= 40
    assert len({p.id for p in problems}) == len(problems)
    for p in problems:
        assert len(p.hidden_tests) >= 10, p.id
        assert p.public_tests and p.statement and p.difficulty in {"easy", "medium", "medium-hard"}
        assert p.solutions["python"] and p.solutions["cpp"] and p.wrong_solutions["python"], p.id
    tags = {t for p in problems for t in p.tags}
    assert all(c in tags for c in CATEGORIES), set(CATEGORIES) - tags
    assert {p.difficulty for p in problems} == {"easy", "medium", "medium-hard"}


def test_data_stays_small():
    size = (Path(build_problems.__file__).parent / "data" / "problems.jsonl").stat().st_size
    assert size < 3_000_000


@pytest.mark.parametrize("slug", ["range_span", "task_order", "isqrt"])
def test_generators_reproduce_the_committed_tests(problems, slug):
    module = build_problems.load_source(build_problems.SOURCES / f"{slug}.py")
    inputs = module.hidden(random.Random(build_problems.seed_of(slug)))
    stored = next(p for p in problems if p.id == slug)
    assert inputs == [t["input"] for t in stored.hidden_tests]
    assert len(inputs[-1]) == max(len(t["input"]) for t in stored.hidden_tests) or slug == "isqrt"


def _python_references_accepted(problems):
    results = judge_many(_subs(problems, "solutions", "python"), workers=2)
    failed = [(p.id, j.verdict.value, j.message) for p, j in zip(problems, results) if not j.accepted]
    assert not failed


def test_python_references_half_accepted(problems):
    _python_references_accepted(problems[::2])


@pytest.mark.slow
def test_every_python_reference_is_accepted(problems):
    _python_references_accepted(problems)


def test_every_wrong_solution_passes_public_and_fails_hidden(problems):
    public = judge_many([{**s, "tests": p.public_tests} for p, s in
                         zip(problems, _subs(problems, "wrong_solutions", "python"))], workers=2)
    assert [p.id for p, j in zip(problems, public) if not j.accepted] == []
    hidden = judge_many(_subs(problems, "wrong_solutions", "python", "hidden"), workers=2,
                        stop_on_first_failure=True)
    assert [p.id for p, j in zip(problems, hidden) if j.accepted] == []


def test_cpp_references_subset_accepted(problems):
    chosen = [p for p in problems if p.id in CPP_SUBSET]
    assert all(j.accepted for j in judge_many(_subs(chosen, "solutions", "cpp"), workers=2))


@pytest.mark.slow
def test_every_cpp_reference_is_accepted(problems):
    results = judge_many(_subs(problems, "solutions", "cpp"), workers=2)
    assert [(p.id, j.verdict.value) for p, j in zip(problems, results) if not j.accepted] == []

"""The generated problem set and the GSM8K / MATH loaders (on our own fixtures, and on the
real public samples when present)."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from envgym.environments.debate.data import (difficulty_bucket, generate_problem,
                                             generate_problems, load_problems)
from envgym.errors import DatasetError, InvalidConfig

from tests.samples import OWN, needs_real, real


def _replay(solution: str) -> int:
    """Recompute the answer from the solution's `a op b = c.` steps, checking each one."""
    value = int(re.match(r"Start: (\d+)\.", solution).group(1))
    for a, op, b, c in re.findall(r"(\d+) ([-+*/]) (\d+) = (\d+)\.", solution):
        assert int(a) == value
        value = {"+": value + int(b), "-": value - int(b), "*": value * int(b),
                 "/": value // int(b)}[op]
        assert op != "/" or int(a) % int(b) == 0
        assert value == int(c) and value > 0
    return value


def test_generated_answers_are_exact():
    for p in generate_problems(200, seed=3):
        assert int(p.answer) == _replay(p.solution)


def test_generation_is_deterministic_and_balanced():
    a, b = generate_problems(50, seed=1), generate_problems(50, seed=1)
    assert a == b
    assert a != generate_problems(50, seed=2)
    assert [p.level for p in a[:10]] == [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]
    assert len({p.id for p in generate_problems(1000)}) == 1000


def test_difficulty_grows_with_level():
    rng = np.random.default_rng(0)
    stats = {}
    for level in range(1, 6):
        ps = [generate_problem(rng, level) for _ in range(100)]
        steps = np.mean([len(re.findall(r" = ", p.solution)) for p in ps])
        sentences = np.mean([p.question.count(".") for p in ps])
        start = np.mean([int(re.match(r"Start: (\d+)", p.solution).group(1)) for p in ps])
        stats[level] = (steps, sentences - steps, start)
    for lo, hi in zip(range(1, 5), range(2, 6)):
        assert stats[hi][0] > stats[lo][0]       # more steps
        assert stats[hi][2] > stats[lo][2]       # larger numbers
    assert stats[1][1] == pytest.approx(1.0) and stats[2][1] == pytest.approx(1.0)  # no distractor
    assert stats[5][1] == pytest.approx(4.0)     # opening sentence + 3 distractors


def test_bad_level_raises():
    with pytest.raises(InvalidConfig):
        generate_problem(np.random.default_rng(0), 6)


def test_difficulty_buckets():
    assert [difficulty_bucket(x) for x in (1, 2, 3, 4, 5, None)] == \
        ["easy", "easy", "medium", "hard", "hard", "unknown"]


def test_own_gsm8k_files():
    train = load_problems(OWN / "gsm8k" / "train.jsonl")
    assert [p.answer for p in train] == ["36", "1250", "-4", "60", "24"]  # "1,250" unseparated
    assert [p.level for p in train] == [1, 3, 1, 3, 1]  # 2, 4, 2, 4 and 1 solution steps
    assert all(p.source == "gsm8k" and "<<" not in p.solution for p in train)
    assert "caf\u00e9" in train[0].question and "Omar\u2019s" in train[3].question
    test = load_problems(OWN / "gsm8k" / "test.jsonl", dataset_format="gsm8k")
    assert [p.answer for p in test] == ["70", "60", "50000"]
    assert [p.level for p in test] == [1, 1, 3]


def test_own_math_files():
    m500 = load_problems(OWN / "math" / "math500.jsonl")
    assert [(p.answer, p.level) for p in m500] == [("\\frac{7}{2}", 2), ("9", 3)]
    assert m500[0].id == "test/algebra/own-1.json"
    style = load_problems(OWN / "math" / "math_test_style.jsonl")
    assert [(p.answer, p.level) for p in style] == [("420", 2), ("\\dfrac{1}{4}", 5),
                                                    ("\\text{noon}", None)]  # "Level ?"
    original = load_problems(OWN / "math" / "original_problem.json", dataset_format="math")
    assert (original[0].answer, original[0].level) == ("\\frac{3}{8}", 1)


@needs_real
def test_real_gsm8k_samples():
    train = load_problems(real("gsm8k", "train_sample.jsonl"))
    assert [p.answer for p in train] == ["72", "10", "5", "1080", "-7"]
    assert all(p.source == "gsm8k" and 1 <= p.level <= 5 for p in train)
    assert "<<" not in train[0].solution
    test = load_problems(real("gsm8k", "test_sample.jsonl"), dataset_format="gsm8k")
    assert [p.answer for p in test] == ["18", "3", "70000"]
    assert [p.level for p in test] == [1, 1, 3]   # 2, 2 and 4 solution steps


@needs_real
def test_real_math_samples():
    m500 = load_problems(real("math", "math500_sample.jsonl"))
    assert [(p.answer, p.level) for p in m500] == [("\\frac{14}{3}", 3), ("9", 3)]
    assert m500[0].id == "test/algebra/2584.json"
    style = load_problems(real("math", "math_test_5000_style_sample.jsonl"))
    assert [(p.answer, p.level) for p in style] == [("420", 3), ("\\dfrac{1}{9}", 4),
                                                    ("\\text{4:30 p.m.}", 3)]
    original = load_problems(real("math", "original_problem_sample.json"), dataset_format="math")
    assert (original[0].answer, original[0].level) == ("\\frac{1}{4}", 1)


def test_math_without_answer_field_uses_last_box_and_unknown_level(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"problem": "p", "level": "Level ?", "type": "Algebra",
                                "solution": "\\boxed{\\phantom{2}} so \\boxed{4}"}) + "\n")
    (p,) = load_problems(path)
    assert (p.answer, p.level, p.id) == ("4", None, "math-00000")


@pytest.mark.parametrize("record, fmt", [
    ({"question": "q", "answer": "no final line"}, "gsm8k"),
    ({"question": "q"}, "gsm8k"),
    ({"problem": "p", "solution": "no box"}, "math"),
    ({"text": "?"}, "auto"),
])
def test_bad_records_raise_dataset_error(tmp_path, record, fmt):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(DatasetError):
        load_problems(path, dataset_format=fmt)


def test_unknown_format_raises():
    with pytest.raises(InvalidConfig):
        load_problems("x.jsonl", dataset_format="csvish")

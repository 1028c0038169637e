"""Answer normalisation: numbers, fractions, simple LaTeX, MATH's last box."""

from fractions import Fraction

import pytest

from envgym.environments.debate.answers import (answers_match, last_boxed, normalize_answer,
                                                parse_number)


@pytest.mark.parametrize("text, value", [
    ("72", Fraction(72)), ("1,080", Fraction(1080)), ("-7", Fraction(-7)), ("18.0", Fraction(18)),
    ("$18", Fraction(18)), ("0.25", Fraction(1, 4)), ("3/4", Fraction(3, 4)),
    ("\\frac{14}{3}", Fraction(14, 3)), ("\\dfrac{1}{9}", Fraction(1, 9)), ("\\frac12", Fraction(1, 2)),
    ("-\\frac{3}{4}", Fraction(-3, 4)), ("x = 5", Fraction(5)), ("50\\%", Fraction(50)),
    ("48^\\circ", Fraction(48)), ("100\\text{ square units}", Fraction(100)), (".5", Fraction(1, 2)),
])
def test_parse_number(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["\\text{4:30 p.m.}", "\\sqrt{2}", "1/0", "abc", ""])
def test_non_numbers_are_none(text):
    assert parse_number(text) is None


def test_normalize_is_canonical_fraction():
    assert normalize_answer("\\dfrac{2}{4}") == "1/2"
    assert normalize_answer("0.5") == "1/2"
    assert normalize_answer("1,080") == "1080"
    assert normalize_answer(None) == ""


@pytest.mark.parametrize("pred, gold, ok", [
    ("18", "18", True), ("18.0", "18", True), ("1080", "1,080", True), ("0.25", "\\frac{1}{4}", True),
    ("4:30 p.m.", "\\text{4:30 p.m.}", True), ("\\left( 3, \\frac{\\pi}{2} \\right)", "(3,\\frac{\\pi}{2})", True),
    ("19", "18", False), ("", "0", False), (None, "0", False), ("1/3", "0.33", False),
])
def test_answers_match(pred, gold, ok):
    assert answers_match(pred, gold) is ok


def test_last_boxed_takes_the_last_box_brace_matched():
    text = "ignore \\boxed{\\phantom{2}} then $\\boxed{\\frac{1}{4}}$."
    assert last_boxed(text) == "\\frac{1}{4}"
    assert last_boxed("\\fbox{7}") == "7"
    assert last_boxed("no box") is None
    assert last_boxed("\\boxed{unclosed") is None


def test_a_second_candidate_in_a_trailing_text_is_no_unit():
    # issue 36: `42\text{ or 41}` was read as 42 (the trailing \text was dropped as a unit)
    assert not answers_match("42\\text{ or 41}", "42")
    assert not answers_match("42 \\text{ (or maybe 41)}", "42")
    assert answers_match("42\\text{ square units}", "42")


def test_an_equation_of_two_numbers_is_no_answer():
    # issue 36: `41 = 42` was read as 42 (a left side of <= 2 characters was dropped)
    assert not answers_match("41 = 42", "42")
    assert not answers_match("2x = 42", "42")
    assert answers_match("x = 42", "42")
    assert answers_match("ab=42", "42")

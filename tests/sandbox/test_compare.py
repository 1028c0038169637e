"""The host-side comparator: LiveCodeBench-style tokens, exact decimals, opt-in tolerance."""

import pytest

from envgym.errors import InvalidConfig
from envgym.sandbox import FloatTolerance, compare


def test_whitespace_and_line_breaks_do_not_matter():
    assert compare("1 2\n3\n", "  1\t2 3  \n\n")[0]


def test_different_token_is_rejected_with_its_position():
    ok, why = compare("1 2 3", "1 2 4")
    assert not ok and "token 3" in why


def test_missing_and_extra_tokens_are_rejected():
    assert not compare("1 2", "1")[0]
    assert not compare("1", "1 2")[0]


def test_numbers_compare_as_exact_decimals():
    assert compare("1", "1.0")[0]
    assert not compare("50000000000000000", "50000000000000001")[0]


def test_case_is_not_folded():
    assert not compare("YES", "yes")[0]


def test_float_tolerance_is_opt_in():
    assert not compare("0.3333333", "0.3333334")[0]
    assert compare("0.3333333", "0.3333334", 1e-6)[0]
    assert compare("1.0", "1.000001", 1e-6)[0]
    assert not compare("1.0", "1.00001", 1e-6)[0]


def test_relative_tolerance_scales_with_the_expected_value():
    tol = FloatTolerance(abs_tol=0.0, rel_tol=1e-3)
    assert compare("1000000", "1000500", tol)[0]
    assert not compare("1", "1.01", tol)[0]


def test_nan_and_words_never_match_numbers():
    assert not compare("1", "nan", 1.0)[0]
    assert not compare("1", "one", 1.0)[0]


def test_bad_tolerance_is_a_config_error():
    with pytest.raises(InvalidConfig):
        compare("1", "1", "loose")

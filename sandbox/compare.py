"""Output comparison on the host (expected outputs never enter a sandbox).

Default: LiveCodeBench-style, token-wise and whitespace-insensitive; tokens that both parse as
numbers compare as exact `Decimal`s, so "1.0" equals "1" but 50000000000000000 does not equal
50000000000000001 (the `np.isclose` trap LCB warns about). A float tolerance is opt-in per
problem; case is never folded.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from envgym.errors import InvalidConfig


@dataclass(frozen=True)
class FloatTolerance:
    """Accept |a - b| <= max(abs_tol, rel_tol * |b|) (b: the expected value)."""

    abs_tol: float = 0.0
    rel_tol: float = 0.0

    @classmethod
    def coerce(cls, value: float | tuple[float, float] | dict | FloatTolerance | None
               ) -> FloatTolerance | None:
        """A bare float means "absolute or relative error up to x" (the Codeforces rule)."""
        if value is None or isinstance(value, FloatTolerance):
            return value
        if isinstance(value, (int, float)):
            return cls(float(value), float(value))
        if isinstance(value, dict):
            return cls(float(value.get("abs", 0.0)), float(value.get("rel", 0.0)))
        if isinstance(value, tuple) and len(value) == 2:
            return cls(float(value[0]), float(value[1]))
        raise InvalidConfig(f"float_tol must be a float, (abs, rel) or a dict, got {value!r}")


def compare(expected: str, actual: str, float_tol: FloatTolerance | float | None = None
            ) -> tuple[bool, str]:
    """Return (match, reason); the reason names the first differing token."""
    tol = FloatTolerance.coerce(float_tol)
    want, got = expected.split(), actual.split()
    for i, (w, g) in enumerate(zip(want, got)):
        if not _token_equal(w, g, tol):
            return False, f"token {i + 1}: expected {w[:40]!r}, got {g[:40]!r}"
    if len(want) != len(got):
        return False, f"expected {len(want)} tokens, got {len(got)}"
    return True, ""


def _token_equal(want: str, got: str, tol: FloatTolerance | None) -> bool:
    if want == got:
        return True
    a, b = _decimal(want), _decimal(got)
    if a is None or b is None:
        return False
    if a == b:
        return True
    if tol is None:
        return False
    # Exact decimal arithmetic: 1.000001 vs 1.0 at 1e-6 must pass, binary floats say no.
    try:
        bound = max(Decimal(repr(tol.abs_tol)), Decimal(repr(tol.rel_tol)) * abs(a))
        return abs(a - b) <= bound
    except ArithmeticError:  # exponents beyond the decimal context: not equal
        return False


def _decimal(token: str) -> Decimal | None:
    try:
        value = Decimal(token)
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None

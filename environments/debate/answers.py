"""Answer extraction and normalisation for numeric and simple-LaTeX maths answers.

Two answers match when both parse to the same exact rational number (`1,080` = `1080` =
`1080.0`, `\\dfrac{1}{4}` = `1/4` = `0.25`, `50\\%` = `50`), and otherwise when their MATH-style
stripped strings are equal (`\\text{4:30 p.m.}` = `4:30 p.m.`). Exact `Fraction` arithmetic
means no float tolerance is ever needed for the generated tasks or GSM8K.
"""

from __future__ import annotations

import re
from fractions import Fraction

from envgym.environments.debate.rules import RULES

__all__ = ["all_boxed", "answers_match", "last_boxed", "normalize_answer", "parse_number",
           "strip_latex"]

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_FRAC = re.compile(r"^\\frac\{([^{}]+)\}\{([^{}]+)\}$")
_FRAC_SHORT = re.compile(r"\\frac(\d)(\d)")
_TEXT = re.compile(r"\\(?:text|textbf|mbox|mathrm)\{([^{}]*)\}")


def last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` (or `\\fbox{...}`), brace-matched; None if absent."""
    start = max(text.rfind("\\boxed"), -1)
    if start < 0:
        start = text.rfind("\\fbox")
    if start < 0:
        return None
    brace = text.find("{", start)
    if brace < 0:
        return None
    depth = 0
    for i in range(brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[brace + 1:i]
    return None


def all_boxed(text: str) -> list[str]:
    """Contents of every `\\boxed{...}`/`\\fbox{...}` in order, brace-matched. The grader
    uses it to refuse a hedge: several different boxed answers are no answer at all."""
    found, pos = [], 0
    for m in re.finditer(r"\\(?:boxed|fbox)", text):
        if m.start() < pos:
            continue
        group = _balanced(text, m.end())
        if group:
            found.append(group[group.find("{") + 1:-1])
            pos = m.end() + len(group)
    return found


def _balanced(text: str, start: int) -> str:
    """The `{...}` group opening at or after `start` (empty if none or unclosed)."""
    brace = text.find("{", start)
    if brace < 0:
        return ""
    depth = 0
    for i in range(brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i + 1]
    return ""


def _trailing_unit() -> str:
    """A trailing `\\text{ ...}` that is dropped as a unit. A unit names no number: with
    `unit_has_no_digit` on, `42\\text{ or 41}` keeps its second candidate (and so matches
    nothing) instead of being read as 42."""
    body = r"[^{}\d]*" if RULES.on("unit_has_no_digit") else r"[^{}]*"
    return r"\\text\{\s+" + body + r"\}\s*$"


def _is_variable(left: str) -> bool:
    """Whether `left = ...` names a variable (`x = 5`), so the left side is dropped. With
    `prefix_is_variable` on only letters do; `41 = 42` is two candidates, not 42."""
    left = left.strip()
    if RULES.on("prefix_is_variable"):
        return re.fullmatch(r"[A-Za-z]{1,2}", left) is not None
    return len(left) <= 2


def strip_latex(answer: str) -> str:
    """The MATH `_strip_string` conventions, plus `$`, commas in numbers and `x =` prefixes."""
    s = answer.strip().replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    s = s.replace("tfrac", "frac").replace("dfrac", "frac")
    s = s.replace("\\left", "").replace("\\right", "")
    s = s.replace("^{\\circ}", "").replace("^\\circ", "").replace("\\$", "").replace("$", "")
    s = re.sub(_trailing_unit(), "", s)  # a unit such as `\text{ square units}`
    s = s.replace("\\%", "").replace("%", "")
    s = _TEXT.sub(r"\1", s)
    if "=" in s and _is_variable(s.split("=")[0]):
        s = s.split("=", 1)[1]
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)
    s = _FRAC_SHORT.sub(r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\sqrt(\w)", r"\\sqrt{\1}", s)
    s = s.replace(" ", "").rstrip(".")
    if s.startswith("."):
        s = "0" + s
    return s


def parse_number(answer: str) -> Fraction | None:
    """An exact rational for `12`, `-7`, `1,080`, `0.25`, `3/4`, `\\frac{3}{4}`, `-\\frac34`."""
    s = strip_latex(answer)
    sign = 1
    if s.startswith("-") and not _NUMBER.match(s):
        sign, s = -1, s[1:]
    if _NUMBER.match(s):
        return sign * Fraction(s)
    parts = s.split("/")
    if len(parts) == 2 and all(_NUMBER.match(p) for p in parts):
        return _safe_div(parts[0], parts[1], sign)
    m = _FRAC.match(s)
    if m and _NUMBER.match(m.group(1)) and _NUMBER.match(m.group(2)):
        return _safe_div(m.group(1), m.group(2), sign)
    return None


def _safe_div(num: str, den: str, sign: int) -> Fraction | None:
    d = Fraction(den)
    return None if d == 0 else sign * Fraction(num) / d


def normalize_answer(answer: str | None) -> str:
    """Canonical text: `p/q` (or `p`) for numbers, the stripped LaTeX otherwise."""
    if answer is None:
        return ""
    value = parse_number(answer)
    if value is None:
        return strip_latex(answer)
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def answers_match(prediction: str | None, gold: str) -> bool:
    """True when `prediction` is the gold answer up to the normalisation above."""
    if prediction is None or not prediction.strip():
        return False
    return normalize_answer(prediction) == normalize_answer(gold)

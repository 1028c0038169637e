"""Grader rule tables: every rule a grader applies, named, so that a check can perturb each one.

A fixture suite only pins a grader if deleting or loosening any single rule changes at least
one fixture's judgement. That can be checked mechanically only when the rules are data rather
than code scattered through a module, so each grader declares a `RuleTable`: one `Rule` per
switch, threshold or pattern set, each with the reason it exists. The grader reads the table
*at judgement time* (`RULES.on(name)`, `RULES[name]`, `RULES.regex(name)`), never copies a value
into a module constant at import, so that an override reaches it.

`RuleTable.mutants()` yields the perturbations `envgym check ID --mutants` applies one at a
time: every rule switched off; every numeric threshold moved down and up by its `step`; every
pattern set with one entry removed (each entry in turn). A mutant *survives* when no grader
fixture's judgement changes under it; a surviving mutant is a rule nothing pins.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Union

__all__ = ["Rule", "RuleTable", "Mutant"]

Value = Union[None, bool, int, float, tuple[str, ...]]


@dataclass(frozen=True)
class Rule:
    """One rule: `value` is None (a switch only), a number (a threshold) or a pattern set.

    `step` is how far a threshold mutant moves it (default: 1 for ints, half the value for
    floats, 0.1 when the value is 0). Every rule can be switched off, so a grader must guard
    each rule's code path with `RULES.on(name)`.
    """

    name: str
    value: Value = None
    why: str = ""
    step: float | None = None

    def moved(self, direction: int) -> int | float:
        assert isinstance(self.value, (int, float)) and not isinstance(self.value, bool)
        if self.step is not None:
            step = self.step
        elif isinstance(self.value, int):
            step = 1
        else:
            step = abs(self.value) / 2 or 0.1
        moved = self.value + direction * step
        return int(moved) if isinstance(self.value, int) and float(step).is_integer() else moved


@dataclass(frozen=True)
class Mutant:
    """One perturbation of one rule: switched off, or a different value."""

    table: str
    rule: str
    kind: str            # "off", "down", "up" or "drop:ENTRY"
    value: Value = None  # the value it installs (unused for "off")

    @property
    def label(self) -> str:
        return f"{self.table}.{self.rule} {self.kind}"


class RuleTable:
    """A named, ordered table of rules with temporary overrides for mutation checks."""

    def __init__(self, name: str, rules: list[Rule]):
        names = [r.name for r in rules]
        if len(set(names)) != len(names):
            raise ValueError(f"rule table {name!r} names a rule twice: {names}")
        self.name = name
        self.rules = {r.name: r for r in rules}
        self._off: set[str] = set()
        self._values: dict[str, Value] = {}

    def __repr__(self) -> str:
        return f"RuleTable({self.name!r}, {len(self.rules)} rules)"

    def _rule(self, name: str) -> Rule:
        try:
            return self.rules[name]
        except KeyError:
            raise KeyError(f"rule table {self.name!r} has no rule {name!r}; it has "
                           f"{sorted(self.rules)}") from None

    def on(self, name: str) -> bool:
        """Whether rule `name` applies (False only under an "off" mutant)."""
        self._rule(name)
        return name not in self._off

    def __getitem__(self, name: str) -> Value:
        rule = self._rule(name)
        return self._values.get(name, rule.value)

    def patterns(self, name: str) -> tuple[str, ...]:
        """The pattern set of `name`; empty when the rule is switched off."""
        value = self[name]
        if not isinstance(value, tuple):
            raise TypeError(f"rule {self.name}.{name} is not a pattern set")
        return () if name in self._off else value

    def regex(self, name: str, flags: int = re.IGNORECASE) -> re.Pattern | None:
        """One compiled alternation of the pattern set, or None when it is empty or off."""
        pats = self.patterns(name)
        return _compile(pats, flags) if pats else None

    @contextlib.contextmanager
    def mutated(self, mutant: Mutant) -> Iterator[None]:
        """Apply one mutant for the duration of the block (not thread-safe: checks only)."""
        if mutant.table != self.name:
            raise ValueError(f"mutant {mutant.label} belongs to another table")
        self._rule(mutant.rule)
        saved = (set(self._off), dict(self._values))
        if mutant.kind == "off":
            self._off.add(mutant.rule)
        else:
            self._values[mutant.rule] = mutant.value
        try:
            yield
        finally:
            self._off, self._values = saved

    def mutants(self) -> Iterator[Mutant]:
        """Every single-rule perturbation: off, threshold down/up, one pattern dropped."""
        for rule in self.rules.values():
            yield Mutant(self.name, rule.name, "off")
            value = rule.value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                yield Mutant(self.name, rule.name, "down", rule.moved(-1))
                yield Mutant(self.name, rule.name, "up", rule.moved(+1))
            elif isinstance(value, tuple) and len(value) > 1:
                for i, entry in enumerate(value):
                    yield Mutant(self.name, rule.name, f"drop:{entry}",
                                 value[:i] + value[i + 1:])


@functools.lru_cache(maxsize=512)
def _compile(patterns: tuple[str, ...], flags: int) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in patterns), flags)

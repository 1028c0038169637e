"""`envgym check ID --mutants`: does every grader rule have a fixture that notices it?

A fixture suite pins a grader only if weakening any single rule changes a judgement. Each
family registers its grader's rule tables (`register(..., grader_rules="module:attr")`, see
`envgym.rules`); this module applies every mutant of every table in turn (a rule switched off,
a threshold moved down and up, one entry dropped from a pattern set), reruns the family's
grader fixtures under it and records which fixture, if any, stops holding. A mutant under
which every fixture still holds *survives*: the rule it perturbs is unpinned.

Speed: per mutant the fixtures run only until the first one fails; the fixture that killed
the previous mutant is tried first, since mutants of one rule tend to be caught by the same
case. A fixture that kills is run once unmutated too: one that fails unmutated cannot judge
anything, and the check says so (`envgym check --only graders` runs them all). Environments
are built once per distinct argument set and reset between cases.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envgym.errors import RegistrationError
from envgym.registration import load_entry_point, make, spec
from envgym.rules import Mutant, RuleTable

__all__ = ["MutationReport", "load_rule_tables", "run_mutants"]


@dataclass
class MutationReport:
    """Which mutants the fixtures killed (and with which fixture) and which survived."""

    env_id: str
    killed: list[tuple[Mutant, str]] = field(default_factory=list)
    survived: list[Mutant] = field(default_factory=list)
    error: str = ""  # why no mutant could be judged (no rules, fixtures failing unmutated)
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return len(self.killed) + len(self.survived)

    @property
    def score(self) -> float:
        return len(self.killed) / self.total if self.total else 0.0

    @property
    def ok(self) -> bool:
        return not self.error and self.total > 0 and not self.survived

    def render(self) -> str:
        head = f"envgym check {self.env_id} --mutants"
        if self.error:
            return f"{head}\n  [FAIL] {self.error}\nFAILED"
        lines = [head, f"  mutation score {len(self.killed)}/{self.total} = {self.score:.3f} "
                       f"({self.seconds:.1f}s)"]
        lines += [f"  [SURVIVED] {m.label}" for m in self.survived]
        lines.append("OK" if self.ok else f"FAILED: {len(self.survived)} mutants survive")
        return "\n".join(lines)


def load_rule_tables(env_id: str) -> list[RuleTable]:
    """The rule tables `env_id` registered: a `RuleTable`, a list of them, or a callable
    returning either. Raises `RegistrationError` for anything else."""
    source = spec(env_id).grader_rules
    if source is None:
        return []
    found = load_entry_point(source) if isinstance(source, str) else source
    if callable(found) and not isinstance(found, RuleTable):
        found = found()
    tables = [found] if isinstance(found, RuleTable) else list(found or [])
    bad = [t for t in tables if not isinstance(t, RuleTable)]
    if bad:
        raise RegistrationError(f"{env_id}: grader_rules must give RuleTables, got "
                                f"{type(bad[0]).__name__}")
    return tables


class _EnvPool:
    """`make(env_id, **kwargs)` built once per argument set; `close()` is deferred to the end,
    since every fixture case starts with `reset(seed=...)`."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any]):
        self.env_id, self.env_kwargs = env_id, env_kwargs
        self.envs: dict[str, Any] = {}

    def __call__(self, **kwargs: Any) -> Any:
        args = {**self.env_kwargs, **kwargs}
        key = repr(sorted(args.items()))
        if key not in self.envs:
            env = make(self.env_id, **args)
            env._pooled_close = env.close
            env.close = lambda: None  # the case's `finally: env.close()` keeps it for reuse
            self.envs[key] = env
        return self.envs[key]

    def close(self) -> None:
        for env in self.envs.values():
            env._pooled_close()
        self.envs.clear()


def _first_failure(fixtures: list, make_env: Callable[..., Any], order: list[int]) -> int | None:
    """The index of the first fixture (in `order`) that no longer holds, or None."""
    from envgym.graders import run_fixtures

    for i in order:
        if not run_fixtures([fixtures[i]], make_env)[0].ok:
            return i
    return None


def run_mutants(env_id: str, env_kwargs: dict[str, Any] | None = None, *,
                reuse_envs: bool = True, label: str | None = None) -> MutationReport:
    """Apply every mutant of `env_id`'s rule tables and rerun its grader fixtures under it;
    `label` names the report (default: the id)."""
    from envgym.graders import run_fixtures

    start = time.perf_counter()
    report = MutationReport(label or env_id)
    tables = load_rule_tables(env_id)
    source = spec(env_id).grader_fixtures
    if not tables:
        report.error = "no grader rule tables registered (register(..., grader_rules=...))"
        return report
    if source is None:
        report.error = "no grader fixtures registered: nothing can pin the rules"
        return report
    fixtures = list(load_entry_point(source)())
    kwargs = dict(env_kwargs or {})
    pool = _EnvPool(env_id, kwargs) if reuse_envs else (
        lambda **kw: make(env_id, **{**kwargs, **kw}))
    holds: dict[int, bool] = {}  # fixture index -> holds unmutated (checked when it kills)
    try:
        order = list(range(len(fixtures)))
        for table in tables:
            for mutant in table.mutants():
                with table.mutated(mutant):
                    hit = _first_failure(fixtures, pool, order)
                if hit is not None and hit not in holds:
                    holds[hit] = run_fixtures([fixtures[hit]], pool)[0].ok
                if hit is not None and not holds[hit]:
                    detail = run_fixtures([fixtures[hit]], pool)[0].detail
                    report.error = (f"grader fixture {fixtures[hit].name!r} fails unmutated "
                                    f"({detail}), so it cannot judge a mutant; run "
                                    f"`envgym check {env_id} --only graders`")
                    return report
                if hit is None:
                    report.survived.append(mutant)
                else:
                    report.killed.append((mutant, fixtures[hit].name))
                    order.remove(hit)
                    order.insert(0, hit)
    finally:
        if isinstance(pool, _EnvPool):
            pool.close()
        report.seconds = time.perf_counter() - start
    return report

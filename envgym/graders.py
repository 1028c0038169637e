"""Grader fixtures: labelled actions with the judgement a grader must reach.

Hacks show that a grader can be gamed; fixtures pin what it decides, so that a weakened
grader (a rule deleted, a threshold moved) fails `envgym check` even when no shipped hack
happens to exploit the gap. Each environment family ships a `fixtures()` function returning
`GraderCase`s and `Ordering`s and registers it with `register(..., grader_fixtures=...)`.

A `GraderCase` plays `actions` from `reset(seed=seed, options=options)` and measures:

* `reward`: the summed reward of the played steps;
* `component.NAME`: the summed reward component NAME (0 when a step has none);
* `info.KEY`: the last step's `info[KEY]` (numbers and booleans);
* `terminated`: 1.0 when the episode terminated.

An action is a string, or a callable `(env, history, info) -> str` for actions that need the
task (copy the question, name the true answer); `history` is every message so far. Cases that
do not fit one agent's step loop (multi-agent debate) give `play(make_env) -> dict` instead.
`expect` maps a measured key to an inclusive `(lo, hi)` range, or to a callable
`env -> (lo, hi)` when the judgement depends on the arguments the check runs under (a
shipped config's `zoom_points`, say): fixtures must hold under every config, not only the
defaults. An `Ordering` asserts that one
case's measurement beats another's by more than `margin` (a paraphrase of the honest action
must out-earn the attack on the same task).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

__all__ = ["GraderCase", "Ordering", "FixtureResult", "measure", "run_fixtures"]

Action = Union[str, Callable[[Any, list, dict], str]]
Range = Union[tuple[float, float], Callable[[Any], tuple[float, float]]]


@dataclass(frozen=True)
class GraderCase:
    name: str
    actions: tuple[Action, ...] = ()
    expect: dict[str, Range] = field(default_factory=dict)
    seed: int = 0
    options: dict[str, Any] | None = None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    play: Callable[[Callable[..., Any]], dict[str, float]] | None = None
    why: str = ""


@dataclass(frozen=True)
class Ordering:
    name: str
    better: GraderCase
    worse: GraderCase
    key: str = "reward"
    margin: float = 0.0
    why: str = ""


@dataclass
class FixtureResult:
    name: str
    ok: bool
    detail: str


def measure(case: GraderCase, make_env: Callable[..., Any]) -> dict[str, float]:
    """Play one case and return every measured key (see the module docstring)."""
    return _play(case, make_env)[0]


def _play(case: GraderCase, make_env: Callable[..., Any]) -> tuple[dict[str, float], Any]:
    """The measurements and the (closed) environment they came from."""
    if case.play is not None:
        return dict(case.play(lambda **kw: make_env(**{**case.env_kwargs, **kw}))), None
    env = make_env(**case.env_kwargs)
    try:
        obs, info = env.reset(seed=case.seed, options=case.options)
        history = list(obs)
        out: dict[str, float] = {"reward": 0.0, "terminated": 0.0}
        for action in case.actions:
            text = action if isinstance(action, str) else action(env, history, info)
            history.append({"role": "assistant", "content": text})
            obs, reward, terminated, truncated, info = env.step(text)
            history.extend(obs)
            out["reward"] += float(reward)
            for k, v in (info.get("reward_components") or {}).items():
                out[f"component.{k}"] = out.get(f"component.{k}", 0.0) + float(v)
            if terminated or truncated:
                out["terminated"] = float(terminated)
                break
        for k, v in info.items():
            if isinstance(v, (bool, int, float)):
                out[f"info.{k}"] = float(v)
        return out, env
    finally:
        env.close()


def _check_case(case: GraderCase, make_env) -> FixtureResult:
    got, env = _play(case, make_env)
    bad = []
    for key, bounds in case.expect.items():
        lo, hi = bounds(env) if callable(bounds) else bounds
        value = got.get(key, 0.0 if key.startswith("component.") else None)
        if value is None:
            bad.append(f"{key} not measured")
        elif not lo - 1e-9 <= value <= hi + 1e-9:
            bad.append(f"{key}={value:.4g} outside [{lo:g}, {hi:g}]")
    return FixtureResult(case.name, not bad, "; ".join(bad) or "ok")


def _check_ordering(order: Ordering, make_env) -> FixtureResult:
    better = measure(order.better, make_env).get(order.key, 0.0)
    worse = measure(order.worse, make_env).get(order.key, 0.0)
    ok = better > worse + order.margin
    detail = f"{order.key}: {order.better.name} {better:.4g} vs {order.worse.name} {worse:.4g}"
    return FixtureResult(order.name, ok, detail if not ok else "ok")


def run_fixtures(fixtures: list[GraderCase | Ordering], make_env: Callable[..., Any]
                 ) -> list[FixtureResult]:
    """Every fixture's verdict; an exception in one case is that case's failure."""
    results = []
    for fx in fixtures:
        try:
            check = _check_case if isinstance(fx, GraderCase) else _check_ordering
            results.append(check(fx, make_env))
        except Exception as e:  # a crashing grader is a failed fixture, not a crashed check
            results.append(FixtureResult(fx.name, False, f"{type(e).__name__}: {e}"))
    return results

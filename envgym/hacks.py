"""Adversarial scripted policies: a reward is trusted only after the policies that game it lose.

Every environment registers `hack_*` scripted policies next to its honest baselines: attempts
to earn reward without doing the task (refusal words around compliance, reading the test
files, stuffing keywords, ...). Each hack class carries a `ceiling`: the baseline it must not
beat and by how much. `run_hacks` plays every hack and its baselines for the same episodes
and reports one line per hack; `envgym check` fails when a hack beats its ceiling.

A metric is `mean_reward`, `success_rate` or `metrics.NAME` (the environment's own
`summarize`). `Ceiling.metrics` are compared with the baseline's value plus `margin` (a
negative margin demands the hack be strictly worse); `caps` are absolute limits, e.g. a
safety hack's `metrics.safety_rate` must be 0: the environment's own outcome must not count
the hack as safe.

Every ceiling bounds `mean_reward`, declared or not: RL optimises the reward, not the success
rate, so a hack that loses on success but out-earns its baseline on reward is still a hack
that training would learn. A ceiling that names only other metrics gets `mean_reward <=
baseline` (margin 0) added; one that names `mean_reward` keeps its own margin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from envgym.registration import load_entry_point, make, spec

__all__ = ["HACK_PREFIX", "Ceiling", "HackResult", "hack_names", "run_hacks"]

HACK_PREFIX = "hack_"


@dataclass(frozen=True)
class Ceiling:
    """What a hack must stay under: each of `metrics` <= the baseline's + `margin`, and each
    capped metric <= its cap."""

    baseline: str
    margin: float = 0.0
    metrics: tuple[str, ...] = ("mean_reward",)
    caps: tuple[tuple[str, float], ...] = ()
    why: str = ""

    def margin_of(self, metric: str) -> float:
        """The declared margin for a declared metric; 0 for the implied `mean_reward`."""
        return self.margin if metric in self.metrics else 0.0

    @property
    def relative(self) -> tuple[str, ...]:
        """The metrics compared with the baseline: the declared ones and `mean_reward`."""
        return tuple(dict.fromkeys([*self.metrics, "mean_reward"]))

    def describe(self) -> str:
        rel = ", ".join(f"{m} <= {self.baseline}{self.margin_of(m):+g}" if self.margin_of(m)
                        else f"{m} <= {self.baseline}" for m in self.relative)
        caps = ", ".join(f"{m} <= {c:g}" for m, c in self.caps)
        return "; ".join(p for p in (rel, caps) if p)


@dataclass
class HackResult:
    hack: str
    ceiling: Ceiling
    values: dict[str, float]
    limits: dict[str, float]

    @property
    def ok(self) -> bool:
        return all(self.values[m] <= self.limits[m] + 1e-9 for m in self.limits)

    def render(self) -> str:
        parts = [f"{m}={self.values[m]:.3f} (limit {self.limits[m]:.3f})" for m in self.limits]
        head = f"{self.hack}: {'stays under' if self.ok else 'BEATS'} its ceiling"
        return f"{head} [{self.ceiling.describe()}]: " + ", ".join(parts)


def hack_names(env_id: str) -> list[str]:
    """The `hack_*` scripted policies registered for `env_id`."""
    return sorted(n for n in spec(env_id).scripted if n.startswith(HACK_PREFIX))


def ceiling_of(env_id: str, hack: str) -> Ceiling:
    cls = load_entry_point(spec(env_id).scripted[hack])
    ceiling = getattr(cls, "ceiling", None)
    if not isinstance(ceiling, Ceiling):
        raise TypeError(f"{env_id} scripted:{hack} declares no `ceiling = Ceiling(...)`.")
    if ceiling.baseline not in spec(env_id).scripted:
        raise TypeError(f"{env_id} scripted:{hack}: baseline {ceiling.baseline!r} is not a "
                        f"registered scripted policy.")
    return ceiling


def run_hacks(env_id: str, *, episodes: int = 100, seed: int = 0,
              env_kwargs: dict[str, Any] | None = None) -> list[HackResult]:
    """Play every hack and the baselines its ceilings name on the same `episodes` seeds."""
    hacks = {h: ceiling_of(env_id, h) for h in hack_names(env_id)}
    runs: dict[str, dict[str, Any]] = {}
    env = make(env_id, **(env_kwargs or {})) if hacks and not spec(env_id).multi_agent else None

    def metrics(policy: str) -> dict[str, Any]:
        if policy not in runs:
            runs[policy] = play(env_id, env, policy, episodes, seed, env_kwargs)
        return runs[policy]

    results = []
    for hack, ceiling in hacks.items():
        got, base = metrics(hack), metrics(ceiling.baseline)
        values = {m: _metric(got, m) for m in [*ceiling.relative, *(m for m, _ in ceiling.caps)]}
        limits = {m: _metric(base, m) + ceiling.margin_of(m) for m in ceiling.relative}
        for m, cap in ceiling.caps:  # a cap tightens, never loosens, the relative limit
            limits[m] = min(cap, limits.get(m, cap))
        results.append(HackResult(hack, ceiling, values, limits))
    if env is not None:
        env.close()
    return results


def play(env_id: str, env: Any, policy: str, episodes: int, seed: int,
         env_kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """`mean_reward`, `success_rate` and `metrics` of scripted `policy` over seeds
    `seed .. seed + episodes - 1`. A single-agent environment is driven in a plain loop on one
    instance (reset, act, step): the engine's per-episode set-up would dominate a check that
    plays hundreds of scripted episodes. Multi-agent environments go through `evaluate`.
    `mean_reward` is the task reward: components the environment declares as training-time
    shaping (`shaping_components`) are reported apart as `shaping_reward`."""
    if env is None:
        from envgym.evaluation import evaluate

        return evaluate(env_id, f"scripted:{policy}", episodes=episodes, seed=seed,
                        env_kwargs=env_kwargs)
    factory = load_entry_point(spec(env_id).scripted[policy])
    shaping = tuple(getattr(env, "shaping_components", ()))  # ranked without (evaluation)
    returns, shaped, outcomes = [], [], []
    for ep in range(episodes):
        agent = factory(seed=seed + ep)
        messages, _ = env.reset(seed=seed + ep)
        total, bonus, done, info = 0.0, 0.0, False, {}
        while not done:
            action = agent.act(env, messages)
            obs, reward, terminated, truncated, info = env.step(action)
            messages = [*messages, {"role": "assistant", "content": action}, *obs]
            parts = info.get("reward_components") or {}
            bonus += sum(float(parts.get(k, 0.0)) for k in shaping)
            total += reward
            done = terminated or truncated
        returns.append(total - bonus)
        shaped.append(bonus)
        outcomes.append(info.get("outcome") or {"success": False})
    return {"mean_reward": sum(returns) / len(returns),
            "shaping_reward": sum(shaped) / len(shaped),
            "success_rate": sum(bool(o.get("success")) for o in outcomes) / len(outcomes),
            "metrics": type(env).summarize(outcomes)}


def _metric(result: dict[str, Any], name: str) -> float:
    if name.startswith("metrics."):
        value = result.get("metrics", {}).get(name.removeprefix("metrics."))
    else:
        value = result.get(name)
    if value is None:
        raise KeyError(f"metric {name!r} not reported (have {sorted(result)} and "
                       f"metrics.{sorted(result.get('metrics', {}))}).")
    return float(value)

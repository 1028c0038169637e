"""The safety–utility frontier: evaluate several policies, print a table, plot the points.

`envgym eval` runs one policy at a time; the frontier needs them side by side. Policies are
the environment's scripted baselines, driven here in a plain loop (reset, act, step) so the
report depends on nothing but the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envgym.errors import InvalidConfig
from envgym.registration import load_entry_point, make, spec

from envgym.environments.safety.metrics import FRONTIER_METRICS

__all__ = ["ENV_ID", "evaluate_policy", "format_table", "plot_frontier", "run_frontier"]

ENV_ID = "envgym/SafetyRules-v0"


def evaluate_policy(policy: str, episodes: int, *, env_id: str = ENV_ID, seed: int = 0,
                    **env_kwargs: Any) -> dict[str, float]:
    """Metrics of scripted `policy` over `episodes` consecutive seeds."""
    s = spec(env_id)
    if policy not in s.scripted:
        raise InvalidConfig(f"unknown policy {policy!r}; choose from {sorted(s.scripted)}")
    factory = load_entry_point(s.scripted[policy])
    env = make(env_id, **env_kwargs)
    outcomes = []
    try:
        for ep in range(episodes):
            agent = factory(seed=seed + ep)
            messages, info = env.reset(seed=seed + ep)
            done = False
            while not done:
                action = agent.act(env, messages)
                obs, _, terminated, truncated, info = env.step(action)
                messages = [*messages, {"role": "assistant", "content": action}, *obs]
                done = terminated or truncated
            outcomes.append(info["outcome"])
        return type(env).summarize(outcomes)
    finally:
        env.close()


def format_table(results: dict[str, dict[str, float]]) -> str:
    cols = [c for c in FRONTIER_METRICS if any(c in m for m in results.values())]
    width = max([len("policy"), *map(len, results)])
    lines = ["policy".ljust(width) + "".join(f"  {c:>24}" for c in cols)]
    for name, m in results.items():
        cells = "".join(f"  {m[c]:>24.3f}" if c in m else f"  {'-':>24}" for c in cols)
        lines.append(name.ljust(width) + cells)
    return "\n".join(lines)


def plot_frontier(results: dict[str, dict[str, float]], out: Path) -> Path:
    """Two panels, one point per policy: safety vs over-refusal, safety vs lookup rate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, x in zip(axes, ("over_refusal_rate", "lookup_rate")):
        for i, (name, m) in enumerate(results.items()):
            ax.scatter(m.get(x, 0.0), m.get("safety_rate", 0.0), s=40)
            ax.annotate(name, (m.get(x, 0.0), m.get("safety_rate", 0.0)), fontsize=8,
                        textcoords="offset points", xytext=(5, 4 if i % 2 == 0 else -11))
        ax.set(xlabel=x.replace("_", " "), ylabel="safety rate", xlim=(-0.05, 1.1),
               ylim=(-0.05, 1.1))
        ax.grid(alpha=0.3)
    fig.suptitle("Safety–utility frontier (envgym/SafetyRules-v0)")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def run_frontier(policies: list[str], episodes: int, out: Path | None = None,
                 **env_kwargs: Any) -> dict[str, dict[str, float]]:
    """Evaluate each policy; print the table; write the PNG when `out` is given."""
    results = {p: evaluate_policy(p, episodes, **env_kwargs) for p in policies}
    print(format_table(results))
    if out is not None:
        print(f"wrote {plot_frontier(results, out)}")
    return results

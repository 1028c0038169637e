"""Metrics logging (JSON lines, TensorBoard, wandb) and the run report (JSON + PNG).

JSON lines are the source of truth: one object per step, `{"step": n, ...}`. On resume the
lines past the checkpoint's step are dropped, so no step is logged twice.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["MetricsLogger", "Progress", "mean_ci", "plot_curve", "read_metrics", "rollout_metrics"]


def mean_ci(values: list[float], z: float = 1.96) -> dict[str, float]:
    """Mean with a normal-approximation 95% confidence interval (z * s / sqrt(n))."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return {"mean": math.nan, "lo": math.nan, "hi": math.nan, "n": 0}
    half = z * x.std(ddof=1) / math.sqrt(x.size) if x.size > 1 else 0.0
    return {"mean": float(x.mean()), "lo": float(x.mean() - half), "hi": float(x.mean() + half),
            "n": int(x.size)}


def read_metrics(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class MetricsLogger:
    """Write each step's metrics to `metrics.jsonl`, TensorBoard and (optionally) wandb."""

    def __init__(self, out_dir: Path, *, resume_step: int = 0, tensorboard: bool = True,
                 wandb: bool = False, wandb_project: str = "envgym", config: dict | None = None):
        out_dir.mkdir(parents=True, exist_ok=True)
        self.path = out_dir / "metrics.jsonl"
        kept = [r for r in read_metrics(self.path) if r.get("step", 0) <= resume_step]
        self.path.write_text("".join(json.dumps(r) + "\n" for r in kept))
        self.tb = self.run = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter
            self.tb = SummaryWriter(str(out_dir / "tb"), purge_step=resume_step + 1)
        if wandb:
            try:
                import wandb as wb
            except ImportError:
                wb = None
            if wb is not None:
                self.run = wb.init(project=wandb_project, dir=str(out_dir), config=config,
                                   resume="allow")

    def log(self, step: int, metrics: dict[str, float]) -> None:
        record = {"step": step, **{k: _plain(v) for k, v in metrics.items()}}
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")
        if self.tb is not None:
            for k, v in record.items():
                if k != "step" and isinstance(v, (int, float)) and math.isfinite(v):
                    self.tb.add_scalar(k, v, step)
        if self.run is not None:
            self.run.log(record, step=step)

    def close(self) -> None:
        if self.tb is not None:
            self.tb.close()
        if self.run is not None:
            self.run.finish()


def _plain(v: Any) -> Any:
    return float(v) if isinstance(v, (np.floating, np.integer)) else v


def plot_curve(records: list[dict[str, Any]], key: str, out: Path, *, title: str = "",
               evals: list[tuple[str, dict[str, float]]] = ()) -> Path:
    """Training curve of `key` per step, with evaluation means and CIs as error bars."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [3, 1]})
    points = [(r["step"], r[key]) for r in records if key in r]
    if points:
        steps, values = zip(*points)
        ax.plot(steps, values, marker=".", label=key)
    ax.set_xlabel("step")
    ax.set_ylabel(key)
    ax.set_title(title or key)
    ax.grid(alpha=0.3)
    for i, (name, ci) in enumerate(evals):
        bx.errorbar([i], [ci["mean"]], yerr=[[ci["mean"] - ci["lo"]], [ci["hi"] - ci["mean"]]],
                    fmt="o", capsize=6)
    bx.set_xticks(range(len(evals)), [name for name, _ in evals])
    bx.set_title("held-out eval (95% CI)")
    bx.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def rollout_metrics(trajs: list[Any]) -> dict[str, float]:
    out: dict[str, float] = {
        "reward": float(np.mean([t.total_reward for t in trajs])),
        "success": float(np.mean([t.success for t in trajs])),
        "turns": float(np.mean([len(t.turns) for t in trajs])),
        "action_tokens": float(np.mean([sum(len(x.action_token_ids) for x in t.turns) for t in trajs])),
        "errors": float(sum(t.error is not None for t in trajs)),
    }
    totals = [{} for _ in trajs]
    for total, t in zip(totals, trajs):
        for turn in t.turns:
            for k, v in turn.reward_components.items():
                total[k] = total.get(k, 0.0) + v
    keys = sorted({k for total in totals for k in total})
    components = {k: [total.get(k, 0.0) for total in totals] for k in keys}
    out.update({f"reward/{k}": float(np.mean(v)) for k, v in components.items()})
    return out


class Progress:
    """A rich progress bar over steps on stderr (a no-op when disabled)."""

    def __init__(self, total: int, start: int, enabled: bool = True):
        self.bar = None
        if enabled:
            from rich.console import Console
            from rich.progress import Progress, TextColumn
            self.bar = Progress(*Progress.get_default_columns(), TextColumn("reward {task.fields[reward]:.3f}"),
                                console=Console(stderr=True), transient=False)
            self.task = self.bar.add_task("train", total=total, completed=start, reward=0.0)
            self.bar.start()

    def update(self, n: int, **fields: float) -> None:
        if self.bar is not None:
            self.bar.update(self.task, advance=n, **fields)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()

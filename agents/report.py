"""Metrics logging (JSON lines, TensorBoard, wandb) and the run report (JSON + PNG).

JSON lines are the source of truth: one object per step, `{"step": n, ...}`. On resume the
lines past the checkpoint's step are dropped, so no step is logged twice.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["MetricsLogger", "Progress", "html_report", "mean_ci", "plot_curve", "read_metrics",
           "rollout_metrics"]


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
    """Training progress on stderr: a rich bar on a terminal; otherwise (a pipe, a log file, CI)
    a plain line every few steps, since a bar that never redraws shows nothing until the end."""

    def __init__(self, total: int, start: int, enabled: bool = True, every: int | None = None,
                 label: str = "train"):
        self.bar = None
        self.enabled, self.total, self.start, self.done, self.label = enabled, total, start, start, label
        self.every = every or min(5, max(1, total // 8))
        self.t0 = time.perf_counter()
        if not enabled:
            return
        from rich.console import Console
        console = Console(stderr=True)
        if console.is_terminal:
            from rich.progress import Progress, TextColumn
            self.bar = Progress(*Progress.get_default_columns(), TextColumn("reward {task.fields[reward]:.3f}"),
                                console=console, transient=False)
            self.task = self.bar.add_task(label, total=total, completed=start, reward=0.0)
            self.bar.start()

    def update(self, n: int, **fields: float) -> None:
        if self.bar is not None:
            self.bar.update(self.task, advance=n, **fields)
            return
        self.done += n
        if self.enabled and (self.done % self.every == 0 or self.done == self.total):
            print(self.line(**fields), file=sys.stderr, flush=True)

    def line(self, **fields: float) -> str:
        """`train step 10/40  reward 0.512  4.1 s/step, about 123 s left`."""
        per_step = (time.perf_counter() - self.t0) / max(1, self.done - self.start)
        values = "  ".join(f"{k} {v:.3f}" for k, v in fields.items())
        return (f"{self.label} step {self.done}/{self.total}  {values}  {per_step:.1f} s/step, "
                f"about {per_step * (self.total - self.done):.0f} s left")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


# ---- the HTML report ------------------------------------------------------------------------

def html_report(path: Path, *, title: str, summary: list[tuple[str, str, str]], png: Path,
                episodes: list[tuple[Any, Any]], notes: str = "") -> Path:
    """One self-contained HTML file (the PNG inlined as base64, no scripts, no links out) that
    opens offline: the reward curve, a before/after table and example episodes side by side.

    `summary` rows are (metric, before, after); `episodes` pairs trajectories of the same task."""
    import base64
    import html

    esc = html.escape
    image = base64.b64encode(png.read_bytes()).decode() if png.is_file() else ""
    rows = "".join(f"<tr><td>{esc(m)}</td><td>{esc(a)}</td><td>{esc(b)}</td></tr>"
                   for m, a, b in summary)
    pairs = "".join(f"<h3>task {esc(str(a.task_id))} (seed {a.seed})</h3><div class=pair>"
                    f"{_episode_html(a, 'before RL')}{_episode_html(b, 'after RL')}</div>"
                    for a, b in episodes)
    body = (f"<h1>{esc(title)}</h1><p>{esc(notes)}</p>"
            f"<h2>Reward curve</h2><img alt='reward curve' src='data:image/png;base64,{image}'>"
            f"<h2>Held-out evaluation</h2><table><tr><th>metric</th><th>SFT</th><th>SFT+RL</th>"
            f"</tr>{rows}</table><h2>Example episodes (same tasks, before and after)</h2>{pairs}")
    style = ("body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 10px}"
             ".pair{display:flex;gap:1em}.ep{flex:1;min-width:0;border:1px solid #ddd;padding:6px}"
             "pre{white-space:pre-wrap;font-size:12px;margin:2px 0}.obs{color:#555}"
             ".act{background:#eef6ee}img{max-width:100%}")
    text = (f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{style}</style></head><body>{body}</body></html>")
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def _episode_html(traj: Any, label: str, max_chars: int = 600) -> str:
    import html

    def clip(text: str) -> str:
        return html.escape(text if len(text) <= max_chars else text[:max_chars] + " [...]")

    parts = [f"<div class=ep><b>{label}</b>: reward {traj.total_reward:.2f}, "
             f"success {bool(traj.success)}, {len(traj.turns)} turns"]
    for i, turn in enumerate(traj.turns):
        obs = "\n".join(m.get("content", "") for m in turn.observation)
        parts.append(f"<pre class=obs>[{i}] {clip(obs)}</pre>"
                     f"<pre class=act>{clip(turn.action)}</pre>"
                     f"<pre>reward {turn.reward:+.2f}</pre>")
    return "".join(parts) + "</div>"

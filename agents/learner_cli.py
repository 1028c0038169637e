"""Typer command functions for `envgym train`, `envgym sft` and `envgym demo`.

`envgym/cli.py` mounts them; they stay thin: parse, call the learner, print the result line.
"""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["demo", "sft", "train"]


def train(config: Path = typer.Argument(..., help="training config (TOML)"),
          resume: bool = typer.Option(False, "--resume", help="continue from the latest checkpoint")
          ) -> None:
    """RL training (GRPO-family, turn-level credit) as the config describes."""
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train as run

    result = run(load_config(config), resume=resume)
    last = max(result["evals"]) if result["evals"] else None
    if last is not None:
        typer.echo(f"step {last}: held-out reward {result['evals'][last]['eval/reward']:.3f}")


def sft(config: Path = typer.Argument(..., help="training config (TOML) with an [sft] section")
        ) -> None:
    """Supervised warm start on (scripted) trajectories, loss on action tokens only."""
    from envgym.agents.sft import main

    typer.echo(f"SFT model written to {main(config)}")


def demo(out: Path = typer.Option(Path("demo_out"), "--out", help="report directory"),
         threads: int = typer.Option(1, "--threads", min=1, help="torch threads"),
         seed: int = typer.Option(0, "--seed", help="model init, demonstrations, sampling"),
         require_improvement: bool = typer.Option(
             False, "--require-improvement",
             help="exit 1 when the held-out intervals overlap")) -> None:
    """Offline end-to-end run: tiny model, noisy SFT, eval, GRPO + turn credit, eval, report.

    Exits 0 when the run completed, whatever the verdict (the last line says it): a newcomer's
    `&& envgym demo` must not read a completed run as a failed set-up."""
    from envgym.agents.demo import demo as run

    report = run(out, threads=threads, seed=seed)
    if require_improvement and not report["improved"]:
        raise typer.Exit(1)

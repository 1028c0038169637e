"""Typer command functions for `envgym train`, `envgym sft` and `envgym demo`.

`envgym/cli.py` mounts them; they stay thin: parse, call the learner, print the result line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

__all__ = ["demo", "sft", "train"]


def train(config: Optional[Path] = typer.Argument(
              None, help="training config (TOML, or a run's train_config.json)"),
          resume: bool = typer.Option(False, "--resume",
                                      help="continue from the latest checkpoint"),
          overwrite: bool = typer.Option(
              False, "--overwrite",
              help="replace the run already in output_dir: deletes its metrics.jsonl, tb/, "
                   "checkpoints/, final/, trajectories/, wandb/, train_config.json and eval_* "
                   "files (listed on stderr); the tiny model and SFT warm start stay"),
          print_config: bool = typer.Option(
              False, "--print-config",
              help="print the resolved config as TOML (every default without CONFIG)")
          ) -> None:
    """RL training (GRPO-family, turn-level credit) as the config describes.

    Ctrl-C stops after the current step with a checkpoint; `--resume` continues from it."""
    from envgym.agents.config import load_config
    from envgym.agents.runfiles import TrainingInterrupted
    from envgym.agents.trainer import train as run

    if print_config:
        from envgym.agents.configdoc import default_config, to_toml
        typer.echo(to_toml(load_config(config) if config else default_config()), nl=False)
        return
    if config is None:
        raise typer.BadParameter("give a CONFIG (or --print-config)", param_hint="CONFIG")
    cfg = load_config(config)
    if cfg.model.policy != "tiny":  # a typo'd Hub name: one line now, not a minute of retries
        from envgym.hub import check_model_source
        check_model_source(cfg.model.policy, what="[model] policy")
    try:
        result = run(cfg, resume=resume, overwrite=overwrite)
    except TrainingInterrupted as e:
        typer.echo(str(e).split("Resume with:")[0] + f"Resume with: envgym train {config} --resume",
                   err=True)
        raise typer.Exit(130) from None
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
         policy: str = typer.Option("base", "--policy",
                                    help="base (shipped pretrained) or tiny (random init)"),
         require_improvement: bool = typer.Option(
             False, "--require-improvement",
             help="exit 1 when the held-out intervals overlap")) -> None:
    """Offline end-to-end run: tiny model, noisy SFT, eval, GRPO + turn credit, eval, report.

    Exits 0 when the run completed, whatever the verdict (the last line says it): a newcomer's
    `&& envgym demo` must not read a completed run as a failed set-up."""
    from envgym.agents.demo import demo as run

    report = run(out, threads=threads, seed=seed, policy=policy)
    if require_improvement and not report["improved"]:
        raise typer.Exit(1)

"""`envgym safety-frontier`: the frontier report as a typer command (mounted by envgym.cli)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from envgym.errors import EnvGymError

from envgym.environments.safety.frontier import run_frontier

__all__ = ["DEFAULT_POLICIES", "frontier"]

# hack_cite_without_lookup is the memorising oracle: the frontier shows the lookup oracle above it.
DEFAULT_POLICIES = ["oracle", "hack_cite_without_lookup", "always_lookup", "never_lookup",
                    "refuse_all", "comply_all"]


def frontier(
    policies: list[str] = typer.Option(DEFAULT_POLICIES, "--policy", "-p",
                                       help="Scripted policy (repeatable)."),
    episodes: int = typer.Option(200, "--episodes", "-n", min=1, help="Episodes per policy."),
    out: Path = typer.Option(Path("safety_frontier.png"), "--out", "-o", help="PNG to write."),
    split: str = typer.Option("all", help="Prompt split: train, test or all."),
    json_out: bool = typer.Option(False, "--json", help="Also print the metrics as JSON."),
) -> None:
    """Safety rate against over-refusal and lookup rate, one point per policy."""
    try:
        results = run_frontier(policies, episodes, out, split=split)
    except EnvGymError as e:
        raise typer.BadParameter(str(e)) from None
    if json_out:
        print(json.dumps(results, sort_keys=True))

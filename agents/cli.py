"""Commands the lead mounts on `envgym`: `serve-policy` and `tiny-model`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["serve_policy", "tiny_model"]


def serve_policy(
    spec: Annotated[str, typer.Argument(help="policy spec, e.g. hf:DIR")],
    host: Annotated[str, typer.Option(help="bind address (loopback by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8001,
) -> None:
    """Serve a local policy as an OpenAI-compatible API with token ids and log-probs."""
    from envgym.agents.policies.server import serve
    typer.echo(f"serving {spec} on http://{host}:{port}/v1", err=True)
    serve(spec, host=host, port=port)


def tiny_model(out: Annotated[Path, typer.Option("--out", help="directory to create")]) -> None:
    """Build the offline tiny model and tokenizer (a standard HF directory)."""
    from envgym.agents.tiny import build_tiny_model
    path = build_tiny_model(out)
    typer.echo(str(path))

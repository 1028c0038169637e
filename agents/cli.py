"""Commands the lead mounts on `envgym`: `serve-policy`, `tiny-model` and `base-model`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

__all__ = ["base_model", "serve_policy", "tiny_model"]


def serve_policy(
    spec: Annotated[str, typer.Argument(help="policy spec, e.g. hf:DIR")],
    host: Annotated[str, typer.Option(help="bind address (loopback by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (0: any free one)")]
    = 8001,
    max_tokens_limit: Annotated[Optional[int], typer.Option(
        min=1, help="largest max_tokens a request may ask for (default: the context length)")]
    = None,
    max_prompt_tokens: Annotated[Optional[int], typer.Option(
        min=1, help="longest prompt in tokens (default: the context length - 1)")] = None,
    max_prompt_chars: Annotated[Optional[int], typer.Option(
        min=1, help="longest prompt text in characters, refused before tokenising "
                    "(default: 8 x --max-prompt-tokens)")] = None,
    chunk_tokens: Annotated[int, typer.Option(
        min=1, help="tokens decoded per scheduling round: the longest a new request waits")]
    = 16,
    max_batch: Annotated[int, typer.Option(min=1, help="rows decoded together per round")] = 64,
    shutdown_timeout: Annotated[float, typer.Option(
        min=0.0, help="seconds SIGTERM waits for in-flight requests before failing them")]
    = 10.0,
    allow_weight_sync: Annotated[bool, typer.Option(
        help="serve POST /v1/load_weights (a trainer pushes new weights between rounds); "
             "loopback addresses only")] = False,
) -> None:
    """Serve a local policy as an OpenAI-compatible API with token ids and log-probs."""
    from envgym.agents.policies.server import serve
    kind, _, path = spec.partition(":")
    if kind in ("hf", "vllm") and path:  # a typo'd Hub name: one line, not minutes of retries
        from envgym.hub import check_model_source
        check_model_source(path)
    serve(spec, host=host, port=port, max_tokens_limit=max_tokens_limit,
          max_prompt_tokens=max_prompt_tokens, max_prompt_chars=max_prompt_chars,
          chunk_tokens=chunk_tokens, max_batch=max_batch,
          shutdown_timeout=shutdown_timeout, allow_weight_sync=allow_weight_sync)


def tiny_model(out: Annotated[Path, typer.Option("--out", help="directory to create")]) -> None:
    """Build the offline tiny model and tokenizer (a standard HF directory)."""
    from envgym.agents.tiny import build_tiny_model
    path = build_tiny_model(out)
    typer.echo(str(path))


def base_model(
    out: Annotated[Path, typer.Option("--out", help="directory for checkpoint, model, report")],
    device: Annotated[str, typer.Option(help="cpu, cuda or cuda:N")] = "cpu",
    steps: Annotated[Optional[int], typer.Option(min=1, help="optimizer steps in all")] = None,
    minutes: Annotated[Optional[float], typer.Option(
        min=0.01, help="wall-clock budget in all (default 30 without --steps)")] = None,
    seed: Annotated[int, typer.Option(help="initialisation and corpus seed")] = 0,
    resume: Annotated[bool, typer.Option(help="continue from DIR/checkpoint")] = False,
    shape: Annotated[str, typer.Option(help="model size: small (shipped), base or large")]
    = "small",
    batch_size: Annotated[int, typer.Option(min=1, help="sequences per step")] = 16,
    seq_len: Annotated[int, typer.Option(min=8, help="tokens per sequence")] = 512,
    lr: Annotated[float, typer.Option(min=0.0, help="peak learning rate")] = 2e-3,
    workers: Annotated[int, typer.Option(min=0, help="corpus worker processes")] = 0,
    checkpoint_minutes: Annotated[float, typer.Option(
        min=0.01, help="minutes between checkpoints")] = 2.0,
    corpus_version: Annotated[Optional[int], typer.Option(
        help="base corpus version (default: the newest; 1: the text of the shipped chain's "
             "first link)")] = None,
    init: Annotated[Optional[Path], typer.Option(
        help="continue pretraining from this model's weights (e.g. the shipped base)")] = None,
    answer_weight: Annotated[float, typer.Option(
        help="loss weight of tokens inside <answer>...</answer> (1: the plain mean)")] = 1.0,
) -> None:
    """Pretrain the offline base model on the generic-skills corpus (Ctrl-C checkpoints)."""
    from envgym.agents.base_model import PretrainArgs, pretrain
    args = PretrainArgs(out=str(out), device=device, steps=steps, minutes=minutes, seed=seed,
                        shape=shape, batch_size=batch_size, seq_len=seq_len, lr=lr,
                        workers=workers, checkpoint_minutes=checkpoint_minutes,
                        init=str(init) if init else None, answer_weight=answer_weight,
                        **({"corpus_version": corpus_version} if corpus_version else {}))
    report = pretrain(args, resume=resume)
    typer.echo(f"{out / 'model'}: {report['parameters'] / 1e6:.2f}M parameters, "
               f"{report['tokens']:,} tokens in {report['seconds']:.0f} s "
               f"({report['tokens_per_s']:,.0f} tokens/s), loss {report['loss_final']}, "
               f"validation loss {report['valid_loss'][-1]['loss']}")
    if report["interrupted"]:
        raise typer.Exit(130)

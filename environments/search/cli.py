"""`envgym index build` and `envgym serve-retriever` (mounted by envgym/cli.py).

Heavy imports stay inside the functions so that `envgym --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["index_app", "serve_retriever"]

index_app = typer.Typer(help="Build retrieval indexes from a corpus JSONL.", no_args_is_help=True)


@index_app.callback()
def _index() -> None:
    """Retrieval indexes (a callback keeps `build` a subcommand even when it is the only one)."""


@index_app.command("build")
def build(corpus: Path = typer.Option(..., "--corpus", help='JSONL of {"id", "contents"}.'),
          kind: str = typer.Option("bm25", "--kind", help="bm25 | dense"),
          out: Path = typer.Option(..., "--out", help="Directory to write the index to."),
          model: str = typer.Option(None, "--model", help="Dense encoder (path or hub name); "
                                    "default: the packaged all-MiniLM-L6-v2."),
          index: str = typer.Option("flat", "--index", help="Dense index type: flat | hnsw.")) -> None:
    """Build an index (with a progress bar on stderr) and save it to OUT."""
    from envgym.environments.search.data import load_corpus
    from envgym.environments.search.retrievers import BM25Retriever, DenseRetriever
    from envgym.errors import EnvGymError

    if kind not in ("bm25", "dense"):
        raise typer.BadParameter("--kind must be bm25 or dense")
    try:
        docs = load_corpus(corpus)
        retriever = (BM25Retriever.from_documents(docs, show_progress=True) if kind == "bm25" else
                     DenseRetriever.from_documents(docs, model=model, index=index, show_progress=True))
        retriever.save(out)
    except EnvGymError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"{kind} index of {len(docs)} passages written to {out}")


def serve_retriever(index: Path = typer.Option(..., "--index", help="Directory from `envgym index build`."),
                    host: str = typer.Option("127.0.0.1", "--host", help="Bind address (loopback by default)."),
                    port: int = typer.Option(8000, "--port", min=0, max=65535,
                                             help="TCP port (0: any free one)."),
                    max_queries: int = typer.Option(
                        1024, "--max-queries", min=1,
                        help="Most queries one request may carry (a 413 beyond)."),
                    max_query_chars: int = typer.Option(
                        4096, "--max-query-chars", min=1,
                        help="Longest query, in characters (a 413 beyond)."),
                    shutdown_timeout: float = typer.Option(
                        10.0, "--shutdown-timeout", min=0.0,
                        help="Seconds SIGTERM waits for in-flight requests.")) -> None:
    """Serve an index over Search-R1's `POST /retrieve` and `GET /health`."""
    from envgym.environments.search.http import serve
    from envgym.environments.search.retrievers import load_retriever
    from envgym.errors import EnvGymError

    try:
        retriever = load_retriever(index)
    except EnvGymError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    serve(retriever, host=host, port=port, max_queries=max_queries,
          max_query_chars=max_query_chars,
          shutdown_timeout=shutdown_timeout, ready=f"serving {index} on http://{host}:{{port}}")

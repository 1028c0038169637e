import json

import typer
from typer.testing import CliRunner

from envgym.environments.search.cli import index_app, serve_retriever
from envgym.environments.search.retrievers import load_retriever


def test_index_build_bm25_then_load(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": str(i), "contents": f'"T{i}"\nfact number{i}'})
                                for i in range(20)))
    result = CliRunner().invoke(index_app, ["build", "--corpus", str(corpus), "--kind", "bm25",
                                            "--out", str(tmp_path / "ix")])
    assert result.exit_code == 0, result.output
    assert "20 passages" in result.output
    assert load_retriever(tmp_path / "ix").search(["number7"], 1)[0][0].document.id == "7"


def test_index_build_rejects_bad_kind_and_missing_corpus(tmp_path):
    r = CliRunner().invoke(index_app, ["build", "--corpus", str(tmp_path / "c.jsonl"), "--kind",
                                       "splade", "--out", str(tmp_path / "o")])
    assert r.exit_code != 0
    r = CliRunner().invoke(index_app, ["build", "--corpus", str(tmp_path / "nope.jsonl"),
                                       "--out", str(tmp_path / "o")])
    assert r.exit_code == 1 and "does not exist" in r.output


def test_serve_retriever_refuses_a_non_index(tmp_path):
    app = typer.Typer()
    app.command()(serve_retriever)
    r = CliRunner().invoke(app, ["--index", str(tmp_path)])
    assert r.exit_code == 1 and "index build" in r.output
    assert "127.0.0.1" in CliRunner().invoke(app, ["--help"]).output

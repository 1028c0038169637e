import typer
from typer.testing import CliRunner

from envgym.environments.safety.cli import frontier
from envgym.environments.safety.frontier import format_table, plot_frontier, run_frontier

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_run_frontier_prints_table_and_writes_png(tmp_path, capsys):
    out = tmp_path / "plots" / "frontier.png"
    results = run_frontier(["refuse_all", "comply_all"], 40, out)
    printed = capsys.readouterr().out
    assert "safety_rate" in printed and "over_refusal_rate" in printed and "lookup_rate" in printed
    assert printed.splitlines()[1].startswith("refuse_all")
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert results["refuse_all"]["over_refusal_rate"] == 1.0


def test_table_marks_missing_metrics():
    table = format_table({"a": {"safety_rate": 0.5, "lookup_rate": 0.25}, "b": {"safety_rate": 1.0}})
    lines = table.splitlines()
    assert lines[1].split() == ["a", "0.500", "0.250"] and lines[2].split() == ["b", "1.000", "-"]


def test_plot_handles_one_policy(tmp_path):
    path = plot_frontier({"only": {"safety_rate": 1.0}}, tmp_path / "p.png")
    assert path.stat().st_size > 1000


def test_typer_command(tmp_path):
    app = typer.Typer()
    app.command("safety-frontier")(frontier)
    app.command("noop")(lambda: None)  # two commands, so typer keeps the sub-command name
    out = tmp_path / "f.png"
    result = CliRunner().invoke(app, ["safety-frontier", "-p", "oracle", "-p", "never_lookup",
                                      "-n", "30", "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert "oracle" in result.output and "never_lookup" in result.output
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert '"oracle": {' in result.output


def test_typer_command_rejects_unknown_policy(tmp_path):
    app = typer.Typer()
    app.command("safety-frontier")(frontier)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["safety-frontier", "-p", "psychic", "-n", "2",
                                      "-o", str(tmp_path / "x.png")])
    assert result.exit_code == 2 and "unknown policy 'psychic'" in result.output

"""`envgym sandbox run|judge`: the sandbox by hand.

The exit status is 0 whenever the sandbox itself worked, whatever the program's verdict (a
TLE is a result, not a failure); 2 when the backend is unavailable or the input is bad, 3 for
an SE (infrastructure) verdict. Results go to stdout, the human summary to stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(help="Run or judge a program in the code sandbox.", no_args_is_help=True,
                  add_completion=False)

_EXTENSIONS = {".py": "python", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".c++": "cpp"}
BackendOpt = typer.Option("auto", "--backend", help="auto | bwrap | docker | subprocess")
LangOpt = typer.Option(None, "--lang", help="python | cpp (default: from the file extension)")


def _language(file: Path, lang: Optional[str]) -> str:
    if lang:
        return lang
    guess = _EXTENSIONS.get(file.suffix.lower())
    if guess is None:
        _fail(f"cannot tell the language of {file.name}; pass --lang python|cpp")
    return guess


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _limits(time_limit: float, memory_mb: int):
    from envgym.errors import InvalidConfig
    from envgym.sandbox import Limits

    try:
        return Limits(time_s=time_limit, memory_mb=memory_mb)
    except InvalidConfig as exc:
        _fail(str(exc))


@app.command("run")
def run_command(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True),
    lang: Optional[str] = LangOpt,
    stdin: Optional[Path] = typer.Option(None, "--stdin", exists=True, dir_okay=False),
    backend: str = BackendOpt,
    time_limit: float = typer.Option(2.0, "--time-limit", help="wall-clock seconds"),
    memory_mb: int = typer.Option(512, "--memory-mb"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Run FILE once in the sandbox and report its verdict."""
    from envgym.errors import EnvGymError
    from envgym.sandbox import Verdict, run

    stdin_text = stdin.read_text(errors="replace") if stdin else ""
    try:
        result = run(file.read_text(errors="replace"), _language(file, lang), stdin_text,
                     _limits(time_limit, memory_mb), backend)
    except EnvGymError as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps(result.to_dict()))
    else:
        sys.stdout.write(result.stdout)
        typer.echo(f"{result.verdict.value} {result.message} wall={result.wall_time:.3f}s "
                   f"cpu={result.cpu_time:.3f}s mem={result.memory_kb}KB "
                   f"backend={result.backend}", err=True)
    if result.verdict is Verdict.SE:
        raise typer.Exit(3)


@app.command("judge")
def judge_command(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True),
    tests: Path = typer.Option(..., "--tests", exists=True, dir_okay=False,
                               help='JSONL, one {"input": ..., "output": ...} per line'),
    lang: Optional[str] = LangOpt,
    backend: str = BackendOpt,
    time_limit: float = typer.Option(2.0, "--time-limit"),
    memory_mb: int = typer.Option(512, "--memory-mb"),
    float_tol: Optional[float] = typer.Option(None, "--float-tol"),
    stop: bool = typer.Option(False, "--stop-on-first-failure"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Judge FILE against the tests in TESTS.jsonl."""
    from envgym.errors import EnvGymError
    from envgym.sandbox import Verdict, judge

    cases = _read_tests(tests)
    try:
        result = judge(file.read_text(errors="replace"), _language(file, lang), cases,
                       _limits(time_limit, memory_mb), backend=backend,
                       stop_on_first_failure=stop, float_tol=float_tol)
    except EnvGymError as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps(result.to_dict()))
    else:
        for t in result.tests:
            typer.echo(f"test {t.index}: {t.verdict.value} {t.wall_time:.3f}s {t.message}")
        typer.echo(f"{result.verdict.value} {result.passed}/{result.total} passed "
                   f"backend={result.backend} {result.message}")
    if result.verdict is Verdict.SE:
        raise typer.Exit(3)


def _read_tests(path: Path) -> list[dict]:
    cases = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            cases.append(json.loads(line))
        except json.JSONDecodeError as exc:
            _fail(f"{path}:{number}: not JSON ({exc.msg})")
    if not cases:
        _fail(f"{path} holds no tests")
    return cases

"""The `envgym` command line (typer + rich). Results go to stdout, progress to stderr.

Heavy subsystems (sandbox, retrieval, policies, learner) are imported only inside the
commands that use them, so `envgym --help` and `envgym list` stay fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="envgym: multi-turn text environments and RL for LLM agents.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
out = Console()
err = Console(stderr=True)

EnvArg = Annotated[Optional[list[str]], typer.Option("--env-arg", help="KEY=VALUE passed to make (JSON values parsed).")]


def parse_env_args(pairs: list[str] | None) -> dict[str, Any]:
    """`["k=v", ...]` → kwargs, with each value parsed as JSON when it parses."""
    kwargs: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--env-arg expects KEY=VALUE, got {pair!r}")
        try:
            kwargs[key] = json.loads(value)
        except json.JSONDecodeError:
            kwargs[key] = value
    return kwargs


@app.command("list")
def list_envs(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List registered environments."""
    from envgym.registration import registry

    specs = sorted(registry().values(), key=lambda s: s.id)
    if as_json:
        rows = [{"id": s.id, "description": s.description, "multi_agent": s.multi_agent,
                 "scripted": sorted(s.scripted)} for s in specs]
        print(json.dumps(rows))
        return
    table = Table("id", "description", "scripted policies")
    for s in specs:
        table.add_row(s.id, s.description, ", ".join(sorted(s.scripted)))
    out.print(table)


@app.command()
def check(env_id: str, env_arg: EnvArg = None) -> None:
    """Check that an environment is sound; exits non-zero on failure."""
    from envgym.checker import check as run_check

    report = run_check(env_id, **parse_env_args(env_arg))
    print(report.render())
    raise typer.Exit(0 if report.ok else 1)


@app.command()
def eval(  # noqa: A001  (the command is called eval)
    env: Annotated[str, typer.Option("--env", help="environment id")],
    policy: Annotated[list[str], typer.Option("--policy", help="SPEC, or AGENT=SPEC per agent")],
    episodes: Annotated[int, typer.Option("--episodes", "-n")] = 10,
    k: Annotated[int, typer.Option("-k", help="pass@k")] = 1,
    samples: Annotated[Optional[int], typer.Option(help="attempts per task (default k)")] = None,
    seed: int = 0,
    env_arg: EnvArg = None,
    out_file: Annotated[Optional[Path], typer.Option("--out", help="also write trajectories")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Evaluate a policy: mean reward, success, turns, pass@k and environment metrics."""
    from envgym.evaluation import evaluate

    result = evaluate(env, _policy_arg(policy), episodes=episodes, k=k, samples=samples, seed=seed,
                      env_kwargs=parse_env_args(env_arg), out=str(out_file) if out_file else None,
                      progress=True)
    if as_json:
        print(json.dumps(result))
        return
    table = Table("metric", "value", title=f"{env} × {result['policy']}")
    for key, value in result.items():
        if key == "metrics":
            for mk, mv in value.items():
                table.add_row(mk, f"{mv:.4g}" if isinstance(mv, float) else str(mv))
        elif key not in ("env", "policy"):
            table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    out.print(table)


@app.command()
def rollout(
    env: Annotated[str, typer.Option("--env")],
    policy: Annotated[list[str], typer.Option("--policy")],
    out_file: Annotated[Path, typer.Option("--out")],
    episodes: Annotated[int, typer.Option("--episodes", "-n")] = 10,
    group_size: Annotated[int, typer.Option("--group-size", "-g")] = 1,
    seed: int = 0,
    env_arg: EnvArg = None,
) -> None:
    """Write trajectories to a JSONL file."""
    from envgym.evaluation import aggregate, run_episodes

    spec = _policy_arg(policy)
    trajs = run_episodes(env, spec, episodes=episodes, group_size=group_size, seed=seed,
                         env_kwargs=parse_env_args(env_arg), out=str(out_file), progress=True)
    summary = aggregate(env, spec if isinstance(spec, str) else json.dumps(spec), trajs)
    err.print(f"wrote {len(trajs)} trajectories to {out_file}: mean reward "
              f"{summary['mean_reward']:.3f}, success {summary['success_rate']:.3f}")


def _policy_arg(values: list[str]) -> Any:
    """One SPEC, or `agent=SPEC` pairs for multi-agent environments (returned as a dict)."""
    if len(values) == 1 and "=" not in values[0].split(":")[0]:
        return values[0]
    pairs = {}
    for v in values:
        agent, sep, spec = v.partition("=")
        if not sep:
            raise typer.BadParameter(f"with several --policy options use AGENT=SPEC, got {v!r}")
        pairs[agent] = spec
    return pairs


# ---- subsystems' commands (their modules keep heavy imports inside the commands) ----------

from envgym.agents.cli import serve_policy as _serve_policy, tiny_model as _tiny_model  # noqa: E402
from envgym.agents.learner_cli import demo as _demo, sft as _sft, train as _train  # noqa: E402
from envgym.environments.safety.cli import frontier as _frontier  # noqa: E402
from envgym.environments.search.cli import index_app as _index_app  # noqa: E402
from envgym.environments.search.cli import serve_retriever as _serve_retriever  # noqa: E402
from envgym.sandbox.cli import app as _sandbox_app  # noqa: E402

app.command("demo")(_demo)
app.command("train")(_train)
app.command("sft")(_sft)
app.add_typer(_sandbox_app, name="sandbox")
app.add_typer(_index_app, name="index")
app.command("serve-retriever")(_serve_retriever)
app.command("serve-policy")(_serve_policy)
app.command("tiny-model")(_tiny_model)
app.command("safety-frontier")(_frontier)


def main() -> None:
    """Console entry point: configuration errors print one readable line, not a traceback."""
    from envgym.errors import EnvGymError

    try:
        app()
    except EnvGymError as e:
        err.print(f"[red]error:[/red] {e}")
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()

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

# rich_markup_mode=None: help and usage errors print as plain click text, so bracketed words
# (`envgym[ray]`, `[default: 0]`) survive and a usage error is one `Error: ...` line.
app = typer.Typer(help="envgym: multi-turn text environments and RL for LLM agents.",
                  no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None)
# markup=False: messages carry user text (paths, specs, failure reasons) that rich would
# otherwise read as style tags; soft_wrap: one message stays one line however long.
out = Console(markup=False, highlight=False)
err = Console(stderr=True, markup=False, highlight=False, soft_wrap=True)

Workers = Annotated[int, typer.Option("--workers", min=0, help="run environments in N Ray actors "
                                      "(0: in-process; needs envgym[ray])")]
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


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            print(f"envgym {version('envgym')}")
        except PackageNotFoundError:  # running from a tree that was never installed
            print("envgym (not installed)")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="print the version and exit")]
        = False) -> None:
    """envgym: multi-turn text environments and RL for LLM agents."""


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
def check(
    env_id: Annotated[Optional[str], typer.Argument(help="environment id (optional with --config: "
                                                    "every environment of the file)")] = None,
    env_arg: EnvArg = None,
    config: Annotated[Optional[Path], typer.Option(
        "--config", help="a training config (TOML): check with the arguments its [[envs]] entry "
                         "gives the environment, training kwargs and with eval_kwargs applied")] = None,
    only: Annotated[Optional[list[str]], typer.Option(
        "--only", help="run only these checks (repeatable): gymnasium, determinism, fuzz, fork, "
                       "close, graders, hacks, adversaries")] = None,
    list_hacks: Annotated[bool, typer.Option("--list-hacks", help="only play the hack_* policies, "
                                             "one line each with its result")] = False,
    hack_episodes: Annotated[int, typer.Option(min=1, help="episodes per hack")] = 100,
    adversary_episodes: Annotated[int, typer.Option(min=1, help="episodes per generic "
                                                    "adversary")] = 20,
    mutants: Annotated[bool, typer.Option("--mutants", help="perturb each grader rule in turn "
                                          "and require a grader fixture to notice; prints the "
                                          "mutation score and every surviving mutant")] = False,
) -> None:
    """Check that an environment is sound and its hacks lose; exits non-zero on failure."""
    from envgym.checker import CHECK_NAMES, check as run_check, check_config
    from envgym.errors import InvalidConfig

    if env_id is None and config is None:
        raise typer.BadParameter("give an environment id, or --config FILE to check every "
                                 "environment the config trains")
    if unknown := set(only or ()) - set(CHECK_NAMES):
        raise typer.BadParameter(f"unknown --only {sorted(unknown)}; known: {', '.join(CHECK_NAMES)}")
    if config is not None and (env_arg or list_hacks):
        raise typer.BadParameter("--config gives the environment arguments; drop --env-arg and "
                                 "--list-hacks (use --only hacks)")
    if mutants:
        _check_mutants(env_id, config, parse_env_args(env_arg))
    if list_hacks:
        from envgym.hacks import run_hacks

        results = run_hacks(env_id, episodes=hack_episodes, env_kwargs=parse_env_args(env_arg))
        for r in results:
            print(r.render())
        if not results:
            print(f"{env_id}: no hack_* policies registered")
        raise typer.Exit(0 if results and all(r.ok for r in results) else 1)
    if config is not None:
        try:
            reports = check_config(config, env_id, hack_episodes=hack_episodes, only=only,
                                   adversary_episodes=adversary_episodes)
        except InvalidConfig as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
    else:
        reports = [run_check(env_id, hack_episodes=hack_episodes, only=only,
                             adversary_episodes=adversary_episodes, **parse_env_args(env_arg))]
    for report in reports:
        print(report.render())
    raise typer.Exit(0 if all(r.ok for r in reports) else 1)


def _check_mutants(env_id: str | None, config: Path | None, env_kwargs: dict[str, Any]) -> None:
    """`check --mutants`: one mutation report per environment (per config variant with
    --config); exits 1 when a mutant survives or a family declares no rules."""
    from envgym.checker import config_variants
    from envgym.errors import InvalidConfig
    from envgym.mutation import run_mutants

    if config is None:
        runs = [(env_id, env_kwargs, None)]
    else:
        try:
            runs = [(v.env_id, v.kwargs, v.label(str(config)))
                    for v in config_variants(config, env_id)]
        except InvalidConfig as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
    reports = [run_mutants(i, kw, label=label) for i, kw, label in runs]
    for report in reports:
        print(report.render())
    raise typer.Exit(0 if all(r.ok for r in reports) else 1)


@app.command()
def init(
    name: Annotated[str, typer.Argument(help="package name, a lower-case identifier (e.g. maze_env)")],
    directory: Annotated[Optional[Path], typer.Option(
        "--dir", help="where to write (default ./NAME with - for _, e.g. ./maze-env: a folder "
                      "named like the package would shadow it)")] = None,
    multi_agent: Annotated[bool, typer.Option("--multi-agent", help="a PettingZoo-style multi-agent env")] = False,
    force: Annotated[bool, typer.Option("--force", help="write into a non-empty directory")] = False,
) -> None:
    """Write a plugin package for a new environment: env, scripted baselines, tests, entry point."""
    from envgym.scaffold import default_dir, env_id_for, init as write, layout_warning

    root = directory or Path(default_dir(name))
    for path in write(name, root, multi_agent=multi_agent, force=force):
        err.print(f"  wrote {path}")
    warning = layout_warning(name, root)
    if warning:
        err.print(warning)
    print(f"{env_id_for(name)} in {root}: pip install -e {root} && envgym check {env_id_for(name)} "
          f"&& (cd {root} && python -m pytest -q)")


@app.command()
def eval(  # noqa: A001  (the command is called eval)
    env: Annotated[str, typer.Option("--env", help="environment id")],
    policy: Annotated[list[str], typer.Option("--policy", help="SPEC, or AGENT=SPEC per agent")],
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1)] = 10,
    k: Annotated[int, typer.Option("-k", min=1, help="pass@k")] = 1,
    samples: Annotated[Optional[int], typer.Option(min=1, help="attempts per task (default k)")] = None,
    seed: Annotated[int, typer.Option(min=0)] = 0,
    env_arg: EnvArg = None,
    out_file: Annotated[Optional[Path], typer.Option("--out", help="also write trajectories")] = None,
    max_error_rate: Annotated[float, typer.Option(
        "--max-error-rate", min=0.0, max=1.0,
        help="exit 1 when a larger share of episodes failed (errors are not scored)")] = 0.1,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    workers: Workers = 0,
    run_dir: Annotated[Optional[Path], typer.Option(
        "--run", help="a training run's output_dir: evaluate with its run-level state (e.g. "
                      "Debate-v0's IRT, so `dynamic` picks modes as in training)")] = None,
    temperature: Annotated[Optional[float], typer.Option(
        min=0.0, help="sampling temperature (0: greedy; default: the backend's, 1.0)")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(
        "--max-tokens", min=1, help="most tokens per action (default 256)")] = None,
) -> None:
    """Evaluate a policy: mean reward, success, turns, pass@k and environment metrics.

    Metrics cover completed episodes only; failed ones are reported apart with their reasons.
    """
    from envgym.evaluation import evaluate

    if samples is not None and samples < k:
        raise typer.BadParameter(f"--samples {samples} is fewer than -k {k}: pass@k needs at "
                                 "least k attempts per task", param_hint="--samples")
    env_kwargs = parse_env_args(env_arg)
    spec = _checked_run_args(env, policy, out_file, env_kwargs)
    run = None
    if run_dir is not None:
        from envgym.agents.run_state import load_run_state

        run = load_run_state(run_dir)
    result = evaluate(env, spec, episodes=episodes, k=k, samples=samples, seed=seed,
                      env_kwargs=env_kwargs, out=str(out_file) if out_file else None,
                      progress=True, workers=workers, run=run,
                      sampling=_sampling(temperature, max_tokens))
    if as_json:
        print(json.dumps(result))
    else:
        _print_eval_table(env, result)
    _exit_on_failures(result, max_error_rate)


def _sampling(temperature: float | None, max_tokens: int | None) -> Any:
    """SamplingParams from the options given; None keeps the rollout engine's defaults."""
    if temperature is None and max_tokens is None:
        return None
    from envgym.policy import SamplingParams

    base = SamplingParams()
    return SamplingParams(temperature=base.temperature if temperature is None else temperature,
                          max_tokens=base.max_tokens if max_tokens is None else max_tokens)


def _print_eval_table(env: str, result: dict[str, Any]) -> None:
    table = Table("metric", "value", title=f"{env} × {result['policy']}")
    for key, value in result.items():
        if key == "metrics":
            for mk, mv in value.items():
                table.add_row(mk, f"{mv:.4g}" if isinstance(mv, float) else str(mv))
        elif key not in ("env", "policy", "failures"):
            table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    out.print(table)


def _exit_on_failures(result: dict[str, Any], max_error_rate: float) -> None:
    """Failed episodes are named on stderr; above the allowed share the command fails."""
    if not result["errors"]:
        return
    total = result["errors"] + result["completed"]
    err.print(f"{result['errors']} of {total} episodes failed (left out of every metric):",
              style="yellow")
    for reason, count in result["failures"].items():
        err.print(f"  {count} × {reason}")
    if result["error_rate"] > max_error_rate:
        err.print(f"error: {result['error_rate']:.0%} of episodes failed, above "
                  f"--max-error-rate {max_error_rate:g}; the numbers above are not trustworthy.",
                  style="red")
        raise typer.Exit(1)


@app.command()
def rollout(
    env: Annotated[str, typer.Option("--env")],
    policy: Annotated[list[str], typer.Option("--policy")],
    out_file: Annotated[Path, typer.Option("--out")],
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1)] = 10,
    group_size: Annotated[int, typer.Option("--group-size", "-g", min=1)] = 1,
    seed: Annotated[int, typer.Option(min=0)] = 0,
    env_arg: EnvArg = None,
    workers: Workers = 0,
) -> None:
    """Write trajectories to a JSONL file."""
    from envgym.evaluation import aggregate, run_episodes

    env_kwargs = parse_env_args(env_arg)
    spec = _checked_run_args(env, policy, out_file, env_kwargs)
    trajs = run_episodes(env, spec, episodes=episodes, group_size=group_size, seed=seed,
                         env_kwargs=env_kwargs, out=str(out_file), progress=True,
                         workers=workers)
    summary = aggregate(env, spec if isinstance(spec, str) else json.dumps(spec), trajs)
    from envgym.evaluation import reward_line

    scored = (f"{reward_line(summary)}, success {summary['success_rate']:.3f}"
              if summary["completed"] else "no episode completed")
    err.print(f"wrote {len(trajs)} trajectories to {out_file}: {scored} "
              f"({summary['errors']} failed, not scored)")
    for reason, count in summary["failures"].items():
        err.print(f"  {count} × {reason}")


def _checked_run_args(env: str, policy: list[str], out_file: Path | None,
                      env_kwargs: dict[str, Any] | None = None) -> Any:
    """Validate `--env`, `--env-arg`, `--policy` and `--out` before anything runs; returns
    the policy arg (with `module:Class` specs spelled `scripted:module:Class`).

    Each problem is a one-line usage error naming the option, never a traceback after the
    episodes have already been paid for.
    """
    from envgym.errors import EnvGymError
    from envgym.registration import spec as env_spec

    try:
        is_multi = env_spec(env).multi_agent
    except EnvGymError as e:
        raise typer.BadParameter(str(e), param_hint="--env") from None
    if env_kwargs:
        _check_env_kwargs(env, env_kwargs)
    parsed = _policy_arg(policy)
    if isinstance(parsed, dict):
        parsed = {agent: _normalized_spec(s) for agent, s in parsed.items()}
    else:
        parsed = _normalized_spec(parsed)
    for agent_spec in (parsed.values() if isinstance(parsed, dict) else [parsed]):
        _check_policy_spec(env, agent_spec)
    if isinstance(parsed, dict) and not is_multi:
        raise typer.BadParameter(f"{env} is single-agent: pass one SPEC", param_hint="--policy")
    if out_file is not None:
        _check_writable(out_file)
    return parsed


_KINDS = ("hf", "openai", "vllm", "scripted")


def _check_env_kwargs(env: str, kwargs: dict[str, Any]) -> None:
    """Every `--env-arg` key must be a constructor argument: a typo would otherwise fail
    every episode (or be swallowed) only after the run started."""
    from envgym.envargs import constructor_keys, unknown_kwarg
    from envgym.registration import load_entry_point, make, spec as env_spec

    if constructor_keys(load_entry_point(env_spec(env).entry_point)) is None:
        try:  # **kwargs we cannot follow: ask the constructor itself
            probe = make(env, **kwargs)
        except TypeError as e:
            raise typer.BadParameter(f"{env}: {e}", param_hint="--env-arg") from None
        getattr(probe, "close", lambda: None)()
        return
    problem = unknown_kwarg(env, kwargs)
    if problem is not None:
        raise typer.BadParameter(problem, param_hint="--env-arg")


def _normalized_spec(value: str) -> str:
    """`module.path:Class` is a scripted policy class, as `scripted:module.path:Class` is."""
    kind, sep, rest = value.partition(":")
    if sep and rest and kind not in _KINDS and ":" not in rest and "/" not in value:
        return f"scripted:{value}"
    return value


def _check_policy_spec(env: str, value: str) -> None:
    kind, sep, rest = value.partition(":")
    if not sep or not rest or kind not in _KINDS:
        raise typer.BadParameter(f"{value!r} is not a policy spec: use hf:PATH, openai:URL#MODEL, "
                                 "vllm:PATH, scripted:NAME or module:Class",
                                 param_hint="--policy")
    if kind in ("hf", "vllm"):
        from envgym.errors import PolicyError
        from envgym.hub import check_model_source

        try:
            check_model_source(rest)
        except PolicyError as e:
            raise typer.BadParameter(str(e), param_hint="--policy") from None
    if kind == "scripted" and ":" in rest:
        from envgym.errors import RegistrationError
        from envgym.registration import load_entry_point

        try:
            load_entry_point(rest)
        except RegistrationError as e:
            raise typer.BadParameter(str(e), param_hint="--policy") from None
    if kind == "openai" and not rest.startswith(("http://", "https://")):
        raise typer.BadParameter(f"{value!r}: the server URL must start with http:// or "
                                 "https:// (openai:http://HOST:PORT#MODEL)", param_hint="--policy")
    if kind == "scripted" and ":" not in rest:
        from envgym.registration import spec as env_spec

        known = env_spec(env).scripted
        if rest not in known:
            raise typer.BadParameter(f"{env} has no scripted policy {rest!r}; it has: "
                                     f"{', '.join(sorted(known)) or 'none'}", param_hint="--policy")


def _check_writable(path: Path) -> None:
    """The output file's folder is created (as `mkdir -p` would) and must take a file; the
    path must not be a folder. Tried for real, not with `os.access`, which says yes to root
    on a read-only file system."""
    if path.is_dir():
        raise typer.BadParameter(f"{path} is a directory; give a file path", param_hint="--out")
    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as e:  # a file where a folder should be, somewhere above
        raise typer.BadParameter(f"cannot write {path}: {e.filename} is not a directory",
                                 param_hint="--out") from None
    except OSError as e:
        raise typer.BadParameter(f"cannot write {path}: {e.strerror or e}",
                                 param_hint="--out") from None
    try:
        existed = path.exists()
        with open(path, "a", encoding="utf-8"):
            pass
        if not existed:
            path.unlink()
    except OSError as e:
        raise typer.BadParameter(f"cannot write {path}: {e.strerror or e}",
                                 param_hint="--out") from None


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


@app.command()
def view(
    run: Annotated[Path, typer.Argument(help="trajectory JSONL, or a training run's directory")],
    credit: Annotated[Optional[str], typer.Option(help="credit chain to run, e.g. grpo,filter")] = None,
    config: Annotated[Optional[Path], typer.Option(help="take the chain and options from a train config")] = None,
    out_file: Annotated[Optional[Path], typer.Option("--out", help="HTML file to write")] = None,
    tokenizer: Annotated[Optional[str], typer.Option(help="tokenizer dir for per-token text")] = None,
    serve: Annotated[bool, typer.Option(help="serve the page on 127.0.0.1")] = False,
    port: int = 8765,
) -> None:
    """See trajectories and their per-token credit in the browser (one self-contained HTML file)."""
    from envgym.agents.view import view_command

    if out_file is not None:
        _check_writable(out_file)
    page = view_command(run, credit=credit, config=config, out=out_file, tokenizer=tokenizer,
                        serve=serve, port=port)
    err.print(f"wrote {page}")


# ---- subsystems' commands (their modules keep heavy imports inside the commands) ----------

from envgym.agents.cli import serve_policy as _serve_policy, tiny_model as _tiny_model  # noqa: E402
from envgym.agents.cli import base_model as _base_model  # noqa: E402
from envgym.integrations.openenv.cli import serve_env as _serve_env  # noqa: E402
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
app.command("serve-env")(_serve_env)
app.command("tiny-model")(_tiny_model)
app.command("base-model")(_base_model)
app.command("safety-frontier")(_frontier)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: configuration errors print one readable line, not a traceback.

    So do files that cannot be written or read (`error: PATH: Permission denied`), as `cp`
    and `mkdir` say it; the message is plain text, so `envgym[ray]` stays intact."""
    from envgym.errors import EnvGymError

    try:
        app(args=argv)
    except EnvGymError as e:
        err.print(f"error: {_one_line(str(e))}")
        raise SystemExit(2) from None
    except OSError as e:
        if e.filename is None:
            raise
        err.print(f"error: {e.filename}: {e.strerror or e}")
        raise SystemExit(1) from None


def _one_line(message: str) -> str:
    return " ".join(message.split())


if __name__ == "__main__":
    main()

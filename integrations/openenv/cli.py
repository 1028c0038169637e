"""`envgym serve-env`: the command; heavy imports stay inside it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


def serve_env(
    env_id: Annotated[str, typer.Argument(help="registered environment id, e.g. envgym/TimeSeries-v0")],
    host: Annotated[str, typer.Option(help="interface to bind (loopback unless you mean it)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (0: any free one)")] = 8000,
    env_arg: Annotated[Optional[list[str]], typer.Option(
        "--env-arg", help="KEY=VALUE passed to make (JSON values parsed).")] = None,
    max_sessions: Annotated[int, typer.Option(min=1, help="concurrent /ws sessions")] = 32,
    idle_timeout: Annotated[float, typer.Option(
        min=0.001, help="seconds before an idle session is closed and its slot freed")] = 300.0,
    ping_interval: Annotated[float, typer.Option(
        min=0.1, help="WebSocket ping period; a peer silent for as long is dropped")] = 20.0,
    shutdown_timeout: Annotated[float, typer.Option(
        min=0.0, help="seconds SIGTERM waits for in-flight steps before exiting")] = 10.0,
    package: Annotated[Optional[Path], typer.Option(
        help="write openenv.yaml, Dockerfile and README.md into this folder and exit")] = None,
    mcp: Annotated[bool, typer.Option(
        "--mcp", help="serve the tools over MCP on stdin/stdout instead (one session per client)")] = False,
) -> None:
    """Serve an environment over OpenEnv's HTTP/WebSocket API (openenv-core's server)."""
    from envgym.cli import parse_env_args
    from envgym.errors import EnvGymError
    from envgym.registration import spec

    kwargs = parse_env_args(env_arg)
    try:
        spec(env_id)
    except EnvGymError as e:
        raise typer.BadParameter(str(e), param_hint="ENV_ID") from None
    if mcp:  # the `mcp` extra; an MCP client spawns this process as its session
        from envgym.integrations.mcp.server import serve_stdio

        return serve_stdio(env_id, kwargs)
    if package is not None:
        from envgym.integrations.openenv.package import write_package

        for path in write_package(env_id, package, kwargs):
            print(path)
        return
    from envgym.integrations.openenv.server import ServerConfig, serve

    config = ServerConfig(env_id, kwargs, max_sessions=max_sessions, idle_timeout=idle_timeout,
                          ping_interval=ping_interval)
    serve(config, host=host, port=port, shutdown_timeout=shutdown_timeout,
          ready=f"serving {env_id} over OpenEnv on http://{host}:{{port}} "
                f"(ws /ws, up to {max_sessions} sessions)")

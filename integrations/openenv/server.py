"""`envgym serve-env ID`: any registered envgym environment as an OpenEnv server.

The server is openenv-core's own (`create_app`, its routes, its `/ws` session protocol and its
session manager); this module only adapts an envgym environment to openenv's `Environment`
interface and configures the server:

* one envgym environment per session (a `/ws` connection), made on the session's first
  `reset`, so `/health`, `/metadata` and `/schema` never build an index or a sandbox;
* at most `max_sessions` sessions; a session idle for `idle_timeout` seconds is reaped by
  openenv's reaper (its environment closed, its slot freed), and WebSocket pings drop
  half-open connections, so a vanished client never holds a slot or a sandbox;
* bad input gets an error and the server stays up: malformed JSON and schema violations are
  answered by openenv, a step before reset or on a reaped session by `ResetNeeded`, an
  over-long action by the action model's length limit, a message over `ws_max_size` by a
  WebSocket close;
* tools are listed over MCP (`tools/list`) and on `/schema`; they are called through `step`,
  in the environment's own action syntax.

Stateless HTTP `/reset` and `/step` are openenv's: each request gets a fresh environment, so a
bare `/step` is always "before reset" and answered with 409.
"""

from __future__ import annotations

import functools
import json
import threading
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from envgym.errors import EnvGymError, InvalidConfig, ResetNeeded

__all__ = ["ServedEnvironment", "ServerConfig", "build_app", "serve"]


@dataclass(frozen=True)
class ServerConfig:
    env_id: str
    env_kwargs: dict[str, Any]
    max_sessions: int = 32
    idle_timeout: float = 300.0
    ping_interval: float = 20.0
    ws_max_size: int = 4 * 1024 * 1024


def _jsonable(value: Any) -> Any:
    """What UTF-8 JSON can carry, which is what the client gets: numpy scalars become numbers,
    tuples lists, and lone surrogates (a hostile action echoed back) become `?`."""
    text = json.dumps(value, default=_default, ensure_ascii=False)
    return json.loads(text.encode("utf-8", "replace").decode("utf-8"))


def _default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalar
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def _seed(seed: Any) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidConfig(f"reset: seed must be a non-negative integer, got {seed!r}")
    return seed


class _ToolList:
    """The duck-typed tool server openenv's `/mcp` handler reads (`list_tools`)."""

    def __init__(self, schemas: list[dict[str, Any]]):
        self.schemas = schemas

    async def list_tools(self) -> list[SimpleNamespace]:
        return [SimpleNamespace(name=f["name"], description=f.get("description", ""),
                                parameters=f.get("parameters", {}), fn=functools.partial(
                                    _call_via_step, f["name"]))
                for f in (s["function"] for s in self.schemas)]


def _call_via_step(name: str, **_: Any) -> Any:
    raise EnvGymError(f"tool {name!r} is called inside an action: send it with `step` in the "
                      "environment's tool syntax (its observation explains the format).")


def _environment_base() -> type:
    from envgym.policy import import_optional
    return import_optional("openenv.core.env_server.interfaces", "openenv").Environment


class ServedEnvironment(_environment_base()):  # type: ignore[misc]
    """One session's envgym environment behind openenv's `Environment` interface."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own instance and thread

    def __init__(self, env_id: str, env_kwargs: dict[str, Any], tools: list[dict[str, Any]],
                 multi_agent: bool):
        super().__init__()
        self.env_id, self.env_kwargs, self.multi_agent = env_id, env_kwargs, multi_agent
        self.mcp_server = _ToolList(tools)
        self.tools = tools
        self._env: Any = None
        self._lock = threading.Lock()
        self._closed = False
        self._done = True
        self._episode_id: str | None = None
        self._steps = 0
        self._task_id: str | None = None
        self._turn = 0

    # ---- openenv's interface -----------------------------------------------------------

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              options: dict[str, Any] | None = None) -> Any:
        seed = _seed(seed)
        if options is not None and not isinstance(options, dict):
            raise InvalidConfig(f"reset: options must be an object, got {type(options).__name__}")
        with self._lock:
            env = self._environment()
            obs, info = env.reset(seed=seed, options=options) if options else env.reset(seed=seed)
            self._done, self._steps, self._episode_id = False, 0, episode_id
            if self.multi_agent:
                return self._multi(obs, {}, {}, {}, info, reset=True)
            self._task_id, self._turn = info.get("task_id"), 0
            return self._single(obs, 0.0, {}, False, False, info, reset=True)

    def step(self, action: Any, timeout_s: float | None = None, **_: Any) -> Any:
        with self._lock:
            if self._closed:
                raise ResetNeeded("this session was closed (idle longer than the server's "
                                  "idle timeout, or shut down); open a new session.")
            if self._env is None or self._done:
                raise ResetNeeded("step before reset: send a reset first"
                                  if self._env is None else
                                  "the episode has ended; send a reset to start another.")
            self._steps += 1
            if self.multi_agent:
                obs, rewards, terms, truncs, infos = self._env.step(dict(action.actions))
                return self._multi(obs, rewards, terms, truncs, infos)
            obs, reward, term, trunc, info = self._env.step(action.content)
            self._turn = info.get("turn", self._turn + 1)
            return self._single(obs, reward, info.get("reward_components", {}), term, trunc, info)

    @property
    def state(self) -> Any:
        from envgym.integrations.openenv.models import EnvgymState
        return EnvgymState(env_id=self.env_id, episode_id=self._episode_id, step_count=self._steps,
                           task_id=self._task_id, turn=self._turn, done=self._done)

    def get_metadata(self) -> Any:
        from openenv.core.env_server.types import EnvironmentMetadata

        import envgym
        spec = envgym.spec(self.env_id)
        return EnvironmentMetadata(name=self.env_id, description=spec.description or self.env_id,
                                   version=envgym.__version__, author="envgym",
                                   readme_content=_readme(self.env_id, spec.description))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._env is not None:
                self._env.close()

    # ---- internals ---------------------------------------------------------------------

    def _environment(self) -> Any:
        if self._closed:
            raise ResetNeeded("this session was closed (idle longer than the server's idle "
                              "timeout, or shut down); open a new session.")
        if self._env is None:
            import envgym
            self._env = envgym.make(self.env_id, **self.env_kwargs)
        return self._env

    def _single(self, obs, reward, components, term, trunc, info, reset=False) -> Any:
        from envgym.integrations.openenv.models import EnvgymObservation
        self._done = bool(term or trunc)
        return EnvgymObservation(
            env_id=self.env_id, messages=_jsonable(list(obs)), reward=float(reward),
            done=self._done, reward_components=_jsonable(components), terminated=bool(term),
            truncated=bool(trunc), info=_jsonable(info),
            tools=self.tools if reset else [],
            stop_sequences=list(getattr(self._env, "stop_sequences", ()) or ()) if reset else [])

    def _multi(self, obs, rewards, terms, truncs, infos, reset=False) -> Any:
        from envgym.integrations.openenv.models import MultiAgentObservation
        agents = list(self._env.agents)
        self._done = not agents
        return MultiAgentObservation(
            env_id=self.env_id, agents=agents, trainable=dict(self._env.trainable),
            messages=_jsonable({a: list(m) for a, m in obs.items()}), done=self._done,
            reward=None, rewards=_jsonable({a: float(r) for a, r in rewards.items()}),
            terminations={a: bool(v) for a, v in terms.items()},
            truncations={a: bool(v) for a, v in truncs.items()}, infos=_jsonable(infos))


def _readme(env_id: str, description: str) -> str:
    return (f"# {env_id}\n\n{description}\n\nServed by `envgym serve-env {env_id}` over "
            "OpenEnv. Actions are `{\"content\": TEXT}` (multi-agent: `{\"actions\": {AGENT: "
            "TEXT}}`); observations carry the new chat messages, the reward and its components, "
            "`terminated`/`truncated` and envgym's `info`.\n")


def _probe(env_id: str, env_kwargs: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """Build the environment once at start-up: bad `--env-arg`s fail here, not per session."""
    import envgym
    spec = envgym.spec(env_id)
    try:
        env = envgym.make(env_id, **env_kwargs)
    except TypeError as e:  # an --env-arg the constructor does not take
        raise InvalidConfig(f"{env_id}: {e}") from e
    try:
        tools = env.tool_schemas() if hasattr(env, "tool_schemas") else []
    finally:
        env.close()
    return _jsonable(tools), spec.multi_agent


def build_app(config: ServerConfig) -> Any:
    """The FastAPI app: openenv-core's `HTTPEnvServer` routes over `ServedEnvironment`
    sessions, behind `guard.WebSocketGuard`, with a `/health` that counts sessions."""
    from fastapi import FastAPI
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from openenv.core.env_server.http_server import HTTPEnvServer
    from starlette.exceptions import HTTPException
    from openenv.core.env_server.types import ConcurrencyConfig

    from envgym.integrations.openenv.guard import WebSocketGuard, truncate

    from envgym.integrations.openenv import models

    if config.max_sessions < 1:
        raise InvalidConfig(f"max_sessions must be at least 1, got {config.max_sessions}")
    if config.idle_timeout <= 0:
        raise InvalidConfig(f"idle_timeout must be positive, got {config.idle_timeout}")
    tools, multi = _probe(config.env_id, config.env_kwargs)
    base = models.MultiAgentAction if multi else models.EnvgymAction
    action_cls = models.action_class(base, config.env_id, tools)
    observation_cls = models.MultiAgentObservation if multi else models.EnvgymObservation
    factory = functools.partial(ServedEnvironment, config.env_id, config.env_kwargs, tools, multi)
    app = FastAPI(title=f"envgym {config.env_id} (OpenEnv)")
    server = HTTPEnvServer(factory, action_cls, observation_cls, concurrency_config=(
        ConcurrencyConfig(max_concurrent_envs=config.max_sessions,
                          session_timeout=config.idle_timeout)))
    server.register_routes(app)
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", "") != "/health"]
    app.state.env_server = server

    @app.get("/health")
    async def health() -> Any:
        """Sessions in use and the cap; 503 when full, so a balancer sends the next elsewhere."""
        active, cap = server.active_sessions, server.max_concurrent_envs
        full = active >= cap
        return JSONResponse(status_code=503 if full else 200, content={
            "status": "full" if full else "healthy", "sessions": {"active": active, "max": cap}})

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Any, exc: RequestValidationError) -> Any:
        from fastapi.encoders import jsonable_encoder
        return JSONResponse(status_code=422,
                            content={"detail": truncate(jsonable_encoder(exc.errors()))})

    @app.exception_handler(HTTPException)
    async def _http_error(_request: Any, exc: HTTPException) -> Any:
        """FastAPI's own answer, with echoed values cut (openenv's /step 422 echoes them)."""
        from fastapi.encoders import jsonable_encoder
        return JSONResponse(status_code=exc.status_code, headers=exc.headers,
                            content={"detail": truncate(jsonable_encoder(exc.detail))})

    app.add_middleware(WebSocketGuard)

    @app.exception_handler(EnvGymError)
    async def _envgym_error(_request: Any, exc: EnvGymError) -> Any:
        status = 409 if isinstance(exc, ResetNeeded) else 400
        return JSONResponse(status_code=status,
                            content={"detail": str(exc), "code": type(exc).__name__})

    return app


def serve(config: ServerConfig, host: str = "127.0.0.1", port: int = 8000,
          log_level: str = "warning", shutdown_timeout: float = 10.0,
          ready: str | None = None) -> None:
    """Run the server until SIGTERM/SIGINT (pings drop half-open WebSockets). On SIGTERM it
    stops accepting, closes every session with 1012 (uvicorn's "service restart"), waits up
    to `shutdown_timeout` for in-flight steps, and exits 0."""
    from envgym.serving import run_server

    run_server(build_app(config), host=host, port=port, log_level=log_level,
               shutdown_timeout=shutdown_timeout, ready=ready,
               ws_ping_interval=config.ping_interval, ws_ping_timeout=config.ping_interval,
               ws_max_size=config.ws_max_size, timeout_keep_alive=5)

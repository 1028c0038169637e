"""Environments in Ray actors: `rollout.workers = N` / `--workers N`.

Code sandboxes, retrievers and simulators are CPU-bound, so a run that outgrows one
process's environment work spreads it over N Ray actors. Only the environments move: the
policy stays where it is (in-process `hf`/`vllm`, or an `openai:` server) and the engine
still makes one batched `generate` per turn over every live episode, whichever actor holds
it. This works without touching the engine: `EnvPool` is the environment factory the engine
already accepts (`collect(factory, ...)`), and each environment it returns is a `RemoteEnv`
proxy whose `reset`/`step`/`fork`/`close` run in an actor.

Each actor holds its environment instances, so their shared resources (sandbox pools,
indexes, simulators: the per-process caches in `envgym.resources`) are built once per actor.
Scripted policies read environment state, so they run inside the actor next to their
environment (`RemoteScripted`).

An actor that dies fails only the episodes it held: their next call raises, and the engine
records them as failed. Ray restarts the actor (`max_restarts=-1`) and later episodes use it;
a new episode asked for while the actor is still restarting waits for it (`restart_wait`).
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

from envgym.errors import InvalidConfig
from envgym.policy import ScriptedFactory

__all__ = ["EnvPool", "RemoteEnv", "RemoteScripted", "require_ray", "scripted_factory"]


def require_ray() -> Any:
    """Import Ray, or say how to get it (workers are an optional extra)."""
    try:
        import ray
    except ImportError:
        raise InvalidConfig("rollout workers need Ray: pip install 'envgym[ray]' "
                            "(or set workers = 0 to run environments in-process)") from None
    return ray


class EnvWorker:
    """The actor: environment instances by handle, and the scripted policies that act in them."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any]):
        self.env_id, self.env_kwargs = env_id, dict(env_kwargs)
        self.envs: dict[int, Any] = {}
        self.scripted: dict[int, Any] = {}
        self.ids = itertools.count()

    def set_run(self, snapshot: dict[str, Any] | None) -> None:
        """This step's run-level state (`envgym.runstate`): environments only read it while
        episodes run, so a per-step snapshot is exactly what in-process episodes see."""
        from envgym.runstate import RunState

        self.run = None
        if snapshot is not None:
            self.run = RunState()
            self.run.load_state_dict(snapshot)

    def make(self) -> tuple[int, dict[str, Any]]:
        from envgym.registration import make

        env = make(self.env_id, **self.env_kwargs)
        if getattr(self, "run", None) is not None and hasattr(env, "bind_run"):
            env.bind_run(self.run)
        return self._adopt(env)

    def _adopt(self, env: Any) -> tuple[int, dict[str, Any]]:
        h = next(self.ids)
        self.envs[h] = env
        attrs = {"stop_sequences": tuple(getattr(env, "stop_sequences", ()) or ())}
        if hasattr(env, "possible_agents"):
            attrs["possible_agents"] = list(env.possible_agents)
            attrs["agents"] = list(getattr(env, "agents", []))
        return h, attrs

    def reset(self, h: int, seed: int | None, options: dict | None) -> tuple[Any, Any, list]:
        obs, info = self.envs[h].reset(seed=seed, options=options)
        return obs, info, list(getattr(self.envs[h], "agents", []))

    def step(self, h: int, action: Any) -> tuple[Any, list]:
        result = self.envs[h].step(action)
        return result, list(getattr(self.envs[h], "agents", []))

    def fork(self, h: int) -> tuple[int, dict[str, Any]]:
        return self._adopt(self.envs[h].fork())

    def act(self, h: int, name: str, seed: int, messages: list) -> str:
        """A scripted policy's turn, with the real environment at hand."""
        if h not in self.scripted:
            from envgym.policy import load_policy

            self.scripted[h] = load_policy(f"scripted:{name}", env_id=self.env_id)(seed=seed)
        return self.scripted[h].act(self.envs[h], messages)

    def close(self, h: int) -> None:
        self.scripted.pop(h, None)
        env = self.envs.pop(h, None)
        if env is not None:
            env.close()

    def pid(self) -> int:
        import os

        return os.getpid()


class RemoteEnv:
    """A stand-in for one environment that lives in an actor; the engine cannot tell."""

    def __init__(self, pool: EnvPool, actor: Any, handle: int, attrs: dict[str, Any]):
        self.pool, self.actor, self.handle = pool, actor, handle
        self.stop_sequences = attrs["stop_sequences"]
        if "possible_agents" in attrs:
            self.possible_agents = attrs["possible_agents"]
            self.agents = attrs["agents"]
        self._closed = False

    def _call(self, method: str, *args: Any) -> Any:
        return self.pool.ray.get(getattr(self.actor, method).remote(self.handle, *args))

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, Any]:
        obs, info, agents = self._call("reset", seed, options)
        if hasattr(self, "agents"):
            self.agents = agents
        return obs, info

    def step(self, action: Any) -> Any:
        result, agents = self._call("step", action)
        if hasattr(self, "agents"):
            self.agents = agents
        return result

    def fork(self) -> RemoteEnv:
        handle, attrs = self._call("fork")
        self.pool.track(self.actor, +1)
        return RemoteEnv(self.pool, self.actor, handle, attrs)

    def act_scripted(self, name: str, seed: int, messages: list) -> str:
        return self._call("act", name, seed, messages)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.pool.track(self.actor, -1)
        self._call("close")

    def __enter__(self) -> RemoteEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EnvPool:
    """N actors of one environment; calling the pool makes an environment on the least-loaded
    actor. Pass it to the engine in place of the environment id."""

    def __init__(self, env_id: str, workers: int, env_kwargs: dict[str, Any] | None = None, *,
                 num_cpus: float = 1.0, max_concurrency: int = 64, restart_wait: float = 60.0):
        if workers < 1:
            raise InvalidConfig(f"workers must be >= 1 for a Ray pool, got {workers}")
        self.ray = require_ray()
        if not self.ray.is_initialized():
            self.ray.init(include_dashboard=False, log_to_driver=False,
                          configure_logging=False, ignore_reinit_error=True)
        self.env_id = self.__name__ = env_id
        # Threaded actors: an actor serves its episodes' steps concurrently, as the in-process
        # engine's thread pool does (a sandbox run waits on a child process, not the GIL).
        remote = self.ray.remote(num_cpus=num_cpus, max_restarts=-1, max_task_retries=0,
                                 max_concurrency=max_concurrency)(EnvWorker)
        self.actors = [remote.remote(env_id, env_kwargs or {}) for _ in range(workers)]
        self.live = {id(a): 0 for a in self.actors}
        self.lock = threading.Lock()
        self.restart_wait = restart_wait

    def __call__(self) -> RemoteEnv:
        with self.lock:
            actor = min(self.actors, key=lambda a: self.live[id(a)])
            self.live[id(actor)] += 1
        try:
            handle, attrs = self._make(actor)
        except BaseException:
            self.track(actor, -1)
            raise
        return RemoteEnv(self, actor, handle, attrs)

    def _make(self, actor: Any) -> tuple[int, dict[str, Any]]:
        """A new environment on `actor`, waiting out a restart. Ray refuses calls while a
        killed actor comes back (`ActorUnavailableError`); asking again is safe, because an
        environment made before the restart died with it and was never handed out. Seen on
        loaded cores, where a restart outlasts the next episode's first call."""
        deadline = time.monotonic() + self.restart_wait
        while True:
            try:
                return self.ray.get(actor.make.remote())
            except self.ray.exceptions.ActorUnavailableError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)

    def track(self, actor: Any, delta: int) -> None:
        with self.lock:
            self.live[id(actor)] += delta

    def set_run(self, run: Any) -> None:
        """Send every actor this step's run-level state (None: no run)."""
        snapshot = None if run is None else run.state_dict()
        self.ray.get([a.set_run.remote(snapshot) for a in self.actors])

    def shutdown(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []


class RemoteScripted:
    """A scripted policy whose every turn runs in the actor beside its environment."""

    def __init__(self, name: str, seed: int):
        self.name, self.seed = name, seed

    def act(self, env: RemoteEnv, messages: list) -> str:
        return env.act_scripted(self.name, self.seed, messages)


def scripted_factory(spec: str) -> ScriptedFactory:
    """`scripted:NAME` for environments in actors (the engine's factory protocol)."""
    from envgym.scripted import parse_scripted_spec

    name = parse_scripted_spec(spec)
    return ScriptedFactory(name, lambda seed=0: RemoteScripted(name, seed))


def pooled(env_id: str, policy: Any, workers: int,
           env_kwargs: dict[str, Any] | None) -> tuple[EnvPool, Any]:
    """The engine's `(env, policy)` arguments for a run over `workers` actors."""
    pool = EnvPool(env_id, workers, env_kwargs)
    if isinstance(policy, str) and policy.startswith("scripted:"):
        policy = scripted_factory(policy)
    elif isinstance(policy, dict):
        policy = {a: scripted_factory(p) if isinstance(p, str) and p.startswith("scripted:") else p
                  for a, p in policy.items()}
    return pool, policy


_POOLS: dict[tuple, EnvPool] = {}


def training_pool(env_id: str, kwargs: dict[str, Any], run: Any, workers: int) -> EnvPool:
    """The trainer's pool for one environment config, built on first use and kept for the
    run (actor start-up costs seconds), with this step's run state pushed to every actor."""
    import json

    key = (env_id, json.dumps(kwargs, sort_keys=True, default=str), workers)
    if key not in _POOLS:
        _POOLS[key] = EnvPool(env_id, workers, kwargs)
    pool = _POOLS[key]
    pool.set_run(run)
    return pool

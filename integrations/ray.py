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

Environments read the run-level state of the step they belong to (`envgym.runstate`), and
an actor keeps it per *lane*: the trainer's pool for one environment config is shared by
the threads that roll out (with `rollout.max_staleness >= 1` the rollout thread samples
step s+N while the learner's thread evaluates after step s), each thread is a lane of its
own (`training_pool`), so the same actors serve both and each new environment binds the
run state its own thread sent. The registry of training pools is locked: two threads that
ask for a config's pool at once get one pool, never two sets of actors.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from typing import Any

from envgym.errors import InvalidConfig
from envgym.policy import ScriptedFactory

__all__ = ["EnvPool", "PoolLane", "RemoteEnv", "RemoteScripted", "require_ray", "scripted_factory",
           "shutdown_training_pools", "training_pool"]


def require_ray() -> Any:
    """Import Ray, or say how to get it (workers are an optional extra)."""
    try:
        import ray
    except ImportError:
        raise InvalidConfig("rollout workers need Ray: pip install 'envgym[ray]' "
                            "(or set workers = 0 to run environments in-process)") from None
    return ray


def _connected() -> Any:
    """Ray, with this process connected to a cluster (a local one started if none is)."""
    ray = require_ray()
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False,
                 ignore_reinit_error=True)
    return ray


class EnvWorker:
    """The actor: environment instances by handle, and the scripted policies that act in them."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any]):
        self.env_id, self.env_kwargs = env_id, dict(env_kwargs)
        self.envs: dict[int, Any] = {}
        self.scripted: dict[int, Any] = {}
        self.runs: dict[str, Any] = {}  # lane -> its run state (None: no run)
        self.ids = itertools.count()

    def set_run(self, snapshot: dict[str, Any] | None, lane: str = "") -> None:
        """`lane`'s run-level state for its current step (`envgym.runstate`): environments
        only read it while episodes run, so a per-step snapshot is exactly what in-process
        episodes see. Lanes are the threads that share this actor; one lane's state never
        reaches another's environments."""
        from envgym.runstate import RunState

        run = None
        if snapshot is not None:
            run = RunState()
            run.load_state_dict(snapshot)
        self.runs[lane] = run

    def make(self, lane: str = "") -> tuple[int, dict[str, Any]]:
        """A new environment, bound to `lane`'s run state if it has one."""
        from envgym.registration import make

        env = make(self.env_id, **self.env_kwargs)
        run = self.runs.get(lane)
        if run is not None and hasattr(env, "bind_run"):
            env.bind_run(run)
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
        self.ray = _connected()
        self.env_id = self.__name__ = env_id
        # Threaded actors: an actor serves its episodes' steps concurrently, as the in-process
        # engine's thread pool does (a sandbox run waits on a child process, not the GIL).
        remote = self.ray.remote(num_cpus=num_cpus, max_restarts=-1, max_task_retries=0,
                                 max_concurrency=max_concurrency)(EnvWorker)
        self.actors = [remote.remote(env_id, env_kwargs or {}) for _ in range(workers)]
        self.live = {id(a): 0 for a in self.actors}
        self.lock = threading.Lock()
        self.restart_wait = restart_wait

    def __call__(self, lane: str = "") -> RemoteEnv:
        """A new environment on the least-loaded actor (counting every lane's episodes),
        bound to `lane`'s run state."""
        with self.lock:
            actor = min(self.actors, key=lambda a: self.live[id(a)])
            self.live[id(actor)] += 1
        try:
            handle, attrs = self._make(actor, lane)
        except BaseException:
            self.track(actor, -1)
            raise
        return RemoteEnv(self, actor, handle, attrs)

    def lane(self, name: str) -> PoolLane:
        """This pool as one caller (thread) sees it: the same actors, its own run state."""
        return PoolLane(self, name)

    def _make(self, actor: Any, lane: str = "") -> tuple[int, dict[str, Any]]:
        """A new environment on `actor`, waiting out a restart. Ray refuses calls while a
        killed actor comes back (`ActorUnavailableError`); asking again is safe, because an
        environment made before the restart died with it and was never handed out. Seen on
        loaded cores, where a restart outlasts the next episode's first call."""
        deadline = time.monotonic() + self.restart_wait
        while True:
            try:
                return self.ray.get(actor.make.remote(lane))
            except self.ray.exceptions.ActorUnavailableError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)

    def track(self, actor: Any, delta: int) -> None:
        with self.lock:
            self.live[id(actor)] += delta

    def set_run(self, run: Any, lane: str = "") -> None:
        """Send every actor `lane`'s run-level state for its step (None: no run)."""
        snapshot = None if run is None else run.state_dict()
        self.ray.get([a.set_run.remote(snapshot, lane) for a in self.actors])

    def shutdown(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []


class PoolLane:
    """One caller's view of an `EnvPool` (the engine's environment factory): environments
    on the pool's actors, bound to this lane's run state; another lane (thread) of the
    same pool may set its own step's state at the same time."""

    def __init__(self, pool: EnvPool, name: str):
        self.pool, self.name = pool, name
        self.env_id = self.__name__ = pool.env_id

    def __call__(self) -> RemoteEnv:
        return self.pool(self.name)

    def set_run(self, run: Any) -> None:
        self.pool.set_run(run, self.name)


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
_POOLS_LOCK = threading.Lock()


def training_pool(env_id: str, kwargs: dict[str, Any], run: Any, workers: int) -> PoolLane:
    """The trainer's pool for one environment config, built on first use and kept for the
    run (actor start-up costs seconds), as the calling thread's lane: this step's run state
    is pushed to every actor for that thread's environments only. The registry is locked
    (the rollout thread and the learner's evaluation may ask at once) and keyed by the Ray
    Ray job too, so a cluster (or connection) started anew gets new actors."""
    import json

    with _POOLS_LOCK:
        context = _connected().get_runtime_context()  # actors live as long as this job
        cluster = (context.get_node_id(), context.get_job_id())
        key = (cluster, env_id, json.dumps(kwargs, sort_keys=True, default=str), workers)
        if key not in _POOLS:
            _POOLS[key] = EnvPool(env_id, workers, kwargs)
        pool = _POOLS[key].lane(f"thread-{threading.get_ident()}")
    pool.set_run(run)
    return pool


def shutdown_training_pools() -> None:
    """Kill the actors of every training pool and forget them (a process that trains again
    on another cluster, or tests that stop theirs)."""
    with _POOLS_LOCK:
        for pool in _POOLS.values():
            with contextlib.suppress(Exception):  # the cluster may be gone already
                pool.shutdown()
        _POOLS.clear()

"""Asynchronous rollouts with bounded staleness (`rollout.max_staleness = N >= 1`).

The synchronous loop alternates: roll out step s with the weights of update s-1, update,
sync, repeat; the generator idles while the learner trains and the other way round. Here a
rollout thread samples ahead while the learner updates:

* **Versions.** After update v the learner publishes version v: a copy of the rollout
  weights and of the run-level state (`envgym.runstate`) as they are then. The thread owns
  an engine of its own (HF, or the run's vLLM engine; never the learner's module, which
  changes under it).
* **The bound.** Step s is rolled out with version s-1-N (0 at the start), so when the
  learner trains it at version s-1 every sample is N versions old, never more: the thread
  is throttled by the versions it waits for, not by a queue length. The thread's wait is
  the generator's idle time; the learner's wait for a batch is its own.
* **Weight sync** (`rollout.weight_sync`). `step`: the whole of step s uses version s-1-N,
  loaded before it starts; reproducible, and kill-and-resume is exact. `turn`: before each
  batched `generate` (a turn of every live episode) the engine loads the newest published
  version; an episode that spans a sync keeps going, each turn tagged with the version that
  sampled it. Either way every turn records its version in
  `Trajectory.meta["policy_versions"]` and its behaviour log-probs in `action_logprobs`,
  and the loss corrects each token with its own (`agents/async_loss.py`).
* **One version stream per policy.** With `[agents.ID]` (ILR: one learner per agent) the
  thread owns one engine per agent and each agent has a `VersionStore` of its own: the
  learner publishes agent a's version v as soon as a's update v is done (the other agent
  may still be training), step sync loads every agent's version s-1-N, turn sync loads
  each agent's newest before each of that agent's generates. A turn records the version
  of the agent that sampled it, the bound and the staleness histogram are taken per agent
  against that agent's learner, and each learner's loss corrects its own turns with the
  behaviour log-probs its own engine recorded (`async/agent/ID/*`).
* **vLLM** (`model.backend = "vllm"`): the run's vLLM engine (one per learner) becomes the
  thread's alone: the thread loads each version into it (`load_state_dict`, vLLM's
  `reload_weights`) and is the only caller of its `generate`. The learner's side (held-out
  evaluation, IG's scoring) gets an HF policy on the learner's own module instead, as the
  `hf` backend has: an engine reloaded from two threads would sample one thread's turns
  with the other's weights. Greedy evaluation (`eval_temperature = 0`) picks the same ids
  on both backends; sampled evaluation draws from HF's streams.
* **A served policy** (`model.backend = "server"`): as vLLM's engine, the run's
  `serve-policy` child process (`policies/served.py`) becomes the thread's: the thread loads
  each version into it over HTTP (`/v1/load_weights`, between the server's rounds, with
  the version number the server then reports per row) and is its only client; the learner
  evaluates with an HF policy on its own module. Generation then runs in another process,
  beside the learner rather than on its interpreter.
* **Ray workers** (`rollout.workers`): the rollout thread and the learner's evaluation
  share an environment config's actors, each thread a lane with its own step's run state
  (`integrations/ray.py` `training_pool`), so neither sees the other's.
* **Groups** are whole steps: a step's G rollouts of a task are finished trajectories from
  one version (`step`) or from versions inside the bound (`turn`), so every credit
  estimator reads the same structure as in the synchronous loop.
* **Kill and resume: in-flight rollouts are checkpointed.** A checkpoint after update k
  waits for the thread to finish steps k+1..k+N (they need versions up to k-1, already
  published) and stores them, with the task cursor after them; a resumed run trains those
  exact batches, and the thread goes on from step k+N+1 with version k.

What the thread cannot run is refused by the config validator (`refusals`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envgym.runstate import RunState
from envgym.trajectory import Trajectory

__all__ = ["AsyncRollouts", "StepRollouts", "VersionStore", "bound_staleness", "refusals",
           "staleness_metrics", "stamp_versions"]

VERSIONS = "policy_versions"
"""`Trajectory.meta` key: the policy version that sampled each turn."""


def refusals(cfg: Any) -> list[str]:
    """Why `cfg` cannot run with `rollout.max_staleness >= 1` (empty: it can)."""
    why = []
    if cfg.model.strategy == "fsdp":
        why.append("model.strategy = 'fsdp': the learner's shards would be gathered for every "
                   "published version while the thread samples; not built (use 'ddp')")
    return why


# ---- versions ---------------------------------------------------------------------------------

class VersionStore:
    """Published versions: weights and run-state copies by version number, newest kept."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._versions: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
        self.closed = False

    def publish(self, version: int, weights: dict[str, Any], run_state: dict[str, Any]) -> None:
        with self._cond:
            self._versions[version] = (weights, run_state)
            self._cond.notify_all()

    def newest(self) -> int:
        with self._cond:
            return max(self._versions, default=-1)

    def wait(self, version: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """Version `version`'s weights and run state, waiting until it is published."""
        with self._cond:
            while version not in self._versions and not self.closed:
                self._cond.wait(0.5)
            if self.closed:
                raise _Closed()
            return self._versions[version]

    def forget_below(self, version: int) -> None:
        with self._cond:
            for v in [v for v in self._versions if v < version]:
                del self._versions[v]

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()


class _Closed(Exception):
    """The run ended while the thread waited."""


def snapshot(state_dict: dict[str, Any]) -> dict[str, Any]:
    """A detached copy of weights that later updates of the learner do not touch."""
    return {k: v.detach().clone() for k, v in state_dict.items()}


def run_snapshot(data: dict[str, Any], step: int) -> RunState:
    """A run state of its own for the thread (environments only read it while they run)."""
    run = RunState()
    run.load_state_dict(data)
    run.step = step
    return run


# ---- the per-turn versions ------------------------------------------------------------------

class VersionedPolicy:
    """`weight_sync = "turn"`: the engine loads the newest published version before each
    batched `generate` and remembers which version sampled each completion."""

    def __init__(self, policy: Any, store: VersionStore, loaded: int):
        self.policy, self.store, self.loaded = policy, store, loaded
        self._stamps: dict[tuple, list[int]] = {}
        self.syncs = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.policy, name)

    def generate(self, prompts: Any, sampling: Any) -> list[Any]:
        newest = self.store.newest()
        if newest > self.loaded:
            load_version(self.policy, self.store.wait(newest)[0], newest)
            self.loaded, self.syncs = newest, self.syncs + 1
        out = self.policy.generate(prompts, sampling)
        for c in out:
            self._stamps.setdefault(_key(c.token_ids, c.logprobs), []).append(self.loaded)
        return out

    def version_of(self, turn: Any) -> int | None:
        """The version that sampled `turn` (first match; None if not generated here)."""
        found = self._stamps.get(_key(turn.action_token_ids, turn.action_logprobs))
        return found.pop(0) if found else None


def load_version(engine: Any, weights: dict[str, Any], version: int) -> None:
    """Load `weights` into `engine`; a served policy also gets the version number, which
    the server then reports for every row it samples."""
    if getattr(engine, "takes_versions", False):
        engine.load_state_dict(weights, version=version)
    else:
        engine.load_state_dict(weights)


def _own_cuda_stream(policy: Any) -> Any:
    """On a GPU the thread issues its kernels on a stream of its own, so generation and the
    learner's update can overlap on the device instead of queueing on the default stream."""
    import contextlib

    import torch

    model = getattr(policy, "model", None)
    if model is None or not torch.cuda.is_available() or \
            not next(model.parameters()).is_cuda:
        return contextlib.nullcontext()
    return torch.cuda.stream(torch.cuda.Stream(device=next(model.parameters()).device))


def _key(ids: list[int], logprobs: list[float]) -> tuple:
    return tuple(ids), tuple(round(x, 6) for x in logprobs)


def _per_agent(value: Any) -> dict[str | None, Any]:
    """`{agent: value}` as given, or `{None: value}`: None is the one shared policy."""
    return dict(value) if isinstance(value, dict) else {None: value}


def _agent_of(traj: Trajectory, streams: dict[str | None, Any]) -> str | None:
    """The stream a trajectory belongs to: its agent's own, else the shared one (None; also
    a fixed partner's, which has no stream and no gradient)."""
    return traj.agent_id if traj.agent_id in streams else None


def stamp_versions(trajs: list[Trajectory], version: int | dict[str | None, int],
                   policy: VersionedPolicy | dict[str | None, VersionedPolicy] | None = None
                   ) -> None:
    """Write each turn's sampling version into `meta["policy_versions"]`: the version its
    agent's engine had loaded (`version`, one int or `{agent: int}`) for all turns (`step`
    sync), or what that agent's `policy` recorded per turn (`turn` sync). A trajectory of
    an agent without a stream of its own (a fixed partner) gets the oldest loaded one."""
    versions, policies = _per_agent(version), _per_agent(policy)
    base = min(versions.values())
    for t in trajs:
        agent = _agent_of(t, versions)
        own, pol = versions.get(agent, base), policies.get(agent)
        if pol is None:
            t.meta[VERSIONS] = [own] * len(t.turns)
        else:
            found = [pol.version_of(turn) if turn.action_token_ids else None
                     for turn in t.turns]
            t.meta[VERSIONS] = [own if v is None else v for v in found]


# ---- the learner's side: the bound and its metrics -------------------------------------------

def _learner_version(traj: Trajectory, learner_version: int | dict[str | None, int]) -> int:
    """The version of the learner that trains `traj`: its agent's (`{agent: version}`), or
    the one shared policy's (an int, or the dict's None entry, or its oldest)."""
    versions = _per_agent(learner_version)
    agent = _agent_of(traj, versions)
    return versions[agent] if agent in versions else min(versions.values())


def turn_staleness(traj: Trajectory, learner_version: int | dict[str | None, int]) -> list[int]:
    """How many versions behind its agent's learner each turn of `traj` was sampled."""
    now = _learner_version(traj, learner_version)
    return [now - v for v in traj.meta.get(VERSIONS, [])]


def bound_staleness(trajs: list[Trajectory], learner_version: int | dict[str | None, int],
                    max_staleness: int, how: str
                    ) -> tuple[list[Trajectory], dict[int, list[int]], int]:
    """Apply the bound: (trajectories kept, {kept index: turns to keep out of the loss},
    trajectories dropped). `drop` removes a trajectory with any turn older than the bound;
    `keep` leaves it in its group (the baseline) with those turns untrained. With one
    learner per agent each trajectory is measured against its own agent's learner."""
    kept, masked, dropped = [], {}, 0
    for t in trajs:
        old = [k for k, s in enumerate(turn_staleness(t, learner_version)) if s > max_staleness]
        if old and how == "drop":
            dropped += 1
            continue
        if old:
            masked[len(kept)] = old
        kept.append(t)
    return kept, masked, dropped


def mask_turns(credit: Any, masked: dict[int, list[int]], trajs: list[Trajectory]) -> None:
    """Take the `bound_staleness` turns out of `credit`'s loss (credit may reorder or drop
    trajectories, so they are found by identity)."""
    where = {id(trajs[i]): turns for i, turns in masked.items()}
    for row, t in enumerate(credit.trajectories):
        for k in where.get(id(t), []):
            credit.turn_mask[row][k] = False


def staleness_metrics(trajs: list[Trajectory], learner_version: int | dict[str | None, int],
                      max_staleness: int) -> tuple[dict[str, float], list[int]]:
    """The staleness histogram of the step's turns (`async/staleness/K`: share of turns K
    versions old) and the raw values (for TensorBoard's histogram). With one learner per
    agent (`learner_version` a dict of agent names) also each agent's own mean and max
    (`async/agent/ID/staleness_mean`, `.../staleness_max`)."""
    values = [s for t in trajs for s in turn_staleness(t, learner_version)]
    out = _histogram("async/", values, max_staleness)
    for agent in (a for a in _per_agent(learner_version) if a is not None):
        own = [s for t in trajs if t.agent_id == agent
               for s in turn_staleness(t, learner_version)]
        part = _histogram(f"async/agent/{agent}/", own, max_staleness)
        out.update({k: v for k, v in part.items() if k.endswith(("_mean", "_max"))})
    return out, values


def _histogram(prefix: str, values: list[int], max_staleness: int) -> dict[str, float]:
    out = {f"{prefix}staleness/{k}": (values.count(k) / len(values) if values else 0.0)
           for k in range(max_staleness + 1)}
    out[f"{prefix}staleness_mean"] = sum(values) / len(values) if values else 0.0
    out[f"{prefix}staleness_max"] = float(max(values, default=0))
    return out


# ---- the rollout thread -----------------------------------------------------------------------

@dataclass
class StepRollouts:
    """One step's rollouts as the learner receives them."""

    step: int
    trajs: list[Trajectory]
    failed: list[Trajectory]
    seconds: float  # rolling out
    cursor: list[int] = field(default_factory=list)  # the task cursor after this step
    version: int = 0  # the version it started from

    def state_dict(self) -> dict[str, Any]:
        return {"step": self.step, "trajs": [t.model_dump(mode="json") for t in self.trajs],
                "failed": [t.model_dump(mode="json") for t in self.failed],
                "seconds": self.seconds, "cursor": list(self.cursor), "version": self.version}

    @classmethod
    def from_state(cls, d: dict[str, Any]) -> StepRollouts:
        return cls(d["step"], [Trajectory.model_validate(t) for t in d["trajs"]],
                   [Trajectory.model_validate(t) for t in d["failed"]], d["seconds"],
                   list(d["cursor"]), d["version"])


Produce = Callable[[int, Any, RunState], StepRollouts]
"""(step, rollout policy, run state) -> that step's rollouts (the trainer's steps 1-2)."""


class AsyncRollouts:
    """The rollout thread and the learner's handle on it.

    `produce(step, policy, run)` rolls one step out (the trainer's own function). `policy`
    is the thread's engine, or `{agent: engine}` with one learner per agent (each agent then
    has a version stream of its own). Steps `first`..`last` are produced in order; `saved`
    are the checkpointed in-flight steps of a resumed run. Errors in the thread (a refused
    step, a dead server) reach the learner at its next `get`."""

    def __init__(self, produce: Produce, policy: Any, *, max_staleness: int, weight_sync: str,
                 start: int, last: int, saved: list[StepRollouts] = ()):
        self.produce, self.n = produce, max_staleness
        self.engines = _per_agent(policy)
        self.weight_sync, self.last = weight_sync, last
        self.stores = {agent: VersionStore() for agent in self.engines}
        self.published: dict[str | None, int] = {}  # each agent's newest version
        self._cond = threading.Condition()
        self._ready: dict[int, StepRollouts] = {s.step: s for s in saved}
        self._error: BaseException | None = None
        self.first = start + 1 + len(saved)  # the first step the thread rolls out
        self.generator_idle = self.learner_idle = 0.0
        self.syncs = 0
        self._thread = threading.Thread(target=self._loop, name="envgym-rollouts", daemon=True)

    # -- learner side --

    def start(self, version: int, weights: dict[str, Any], run: RunState) -> None:
        """Publish the starting version (the loaded or resumed model; `{agent: weights}` with
        one engine per agent) and start sampling."""
        for agent, own in (weights.items() if None not in self.engines else [(None, weights)]):
            self.publish(version, own, run, agent)
        self._thread.start()

    def publish(self, version: int, weights: dict[str, Any], run: RunState,
                agent: str | None = None) -> None:
        """Version `version` of `agent`'s policy (None: the shared one) is its learner after
        update `version`; the weights are copied (and on a GPU the copy has finished before
        the thread's own stream reads it)."""
        copied = snapshot(weights)
        if any(v.is_cuda for v in copied.values()):
            import torch
            torch.cuda.current_stream().synchronize()
        self.stores[agent].publish(version, copied, run.state_dict())
        self.published[agent] = version

    def learner_versions(self) -> int | dict[str | None, int]:
        """The version each learner is at (one int for the one shared policy)."""
        return self.published[None] if None in self.engines else dict(self.published)

    def get(self, step: int) -> StepRollouts:
        """Step `step`'s rollouts, waiting for the thread (learner idle time)."""
        t0 = time.perf_counter()
        with self._cond:
            while step not in self._ready and self._error is None:
                self._cond.wait(0.5)
            if self._error is not None and step not in self._ready:
                raise self._error
            out = self._ready.pop(step)
        self.learner_idle += time.perf_counter() - t0
        for store in self.stores.values():  # nothing older is needed again
            store.forget_below(max(0, step - self.n))
        return out

    def in_flight(self, step: int) -> list[StepRollouts]:
        """After update `step`: wait for steps step+1..step+N and return them (for the
        checkpoint; they stay queued for the learner)."""
        upto = min(step + self.n, self.last)
        with self._cond:
            while any(s not in self._ready for s in range(step + 1, upto + 1)) \
                    and self._error is None:
                self._cond.wait(0.5)
            if self._error is not None:
                raise self._error
            return [self._ready[s] for s in range(step + 1, upto + 1)]

    def idle_metrics(self) -> dict[str, float]:
        """Idle seconds since the last call, and the weight loads of the thread."""
        out = {"time/generator_idle_s": self.generator_idle,
               "time/learner_idle_s": self.learner_idle, "async/weight_syncs": float(self.syncs)}
        self.generator_idle = self.learner_idle = 0.0
        self.syncs = 0
        return out

    def close(self) -> None:
        """Stop the thread (at its next wait for a version) and join it."""
        for store in self.stores.values():
            store.close()
        if self._thread.is_alive():
            self._thread.join(timeout=60)

    def __enter__(self) -> AsyncRollouts:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the thread --

    def _loop(self) -> None:
        try:
            with _own_cuda_stream(next(iter(self.engines.values()))):
                for step in range(self.first, self.last + 1):
                    self._ready_put(self._one(step))
        except _Closed:
            return
        except BaseException as e:  # noqa: BLE001 - handed to the learner, re-raised there
            with self._cond:
                self._error = e
                self._cond.notify_all()

    def _one(self, step: int) -> StepRollouts:
        base = max(0, step - 1 - self.n)  # the oldest the bound allows: step sync's one
        loaded: dict[str | None, int] = {}
        states: dict[str | None, dict[str, Any]] = {}
        for agent in self.engines:
            loaded[agent], states[agent] = self._load(agent, base)
        run_state = states[max(loaded, key=loaded.__getitem__)]  # the newest version's
        versioned = {agent: VersionedPolicy(engine, self.stores[agent], loaded[agent])
                     for agent, engine in self.engines.items()} \
            if self.weight_sync == "turn" else {}
        policy = {**self.engines, **versioned}
        out = self.produce(step, policy[None] if None in policy else policy,
                           run_snapshot(run_state, step))
        stamp_versions(out.trajs + out.failed, loaded, versioned or None)
        self.syncs += sum(p.syncs for p in versioned.values())
        out.version = min(loaded.values())  # step sync: `base` for every agent
        return out

    def _load(self, agent: str | None, base: int) -> tuple[int, dict[str, Any]]:
        """Load `agent`'s version `base` into its engine (turn sync: its newest, if newer),
        waiting for it to be published; (the version loaded, its run state)."""
        store = self.stores[agent]
        t0 = time.perf_counter()
        weights, run_state = store.wait(base)
        self.generator_idle += time.perf_counter() - t0
        version = base
        if self.weight_sync == "turn" and (newest := store.newest()) > base:
            version = newest  # turn sync: the freshest published one
            weights, run_state = store.wait(version)
        load_version(self.engines[agent], weights, version)
        self.syncs += 1
        return version, run_state

    def _ready_put(self, rollouts: StepRollouts) -> None:
        with self._cond:
            self._ready[rollouts.step] = rollouts
            self._cond.notify_all()


# ---- wiring for the trainer -------------------------------------------------------------------

def start_rollout_thread(cfg: Any, team: Any, produce: Produce, run: RunState, start: int,
                         saved: list[StepRollouts]) -> AsyncRollouts:
    """The thread's own engine per learner, started on version `start`: one engine for the
    shared policy, or one per `[agents.ID]` learner. HF: a new engine with a tokenizer of
    its own (fast tokenizers are not safe to share between threads). vLLM: the learner's
    engine is handed to the thread, and the learner gets an HF policy on its own module
    (`learner.policy`; the trainer reads `team.policy` again after this)."""
    import copy

    from envgym.agents.fsdp import rollout_weights
    from envgym.agents.learner import dist_info
    from envgym.agents.policies.hf import HFPolicy
    from envgym.errors import InvalidConfig

    if dist_info()[1] > 1:
        raise InvalidConfig("rollout.max_staleness >= 1 runs in one process (one rollout "
                            "thread beside one learner); launch it without torchrun")

    def engine(learner: Any) -> Any:
        if cfg.model.backend in ("vllm", "server"):
            own, learner.policy = learner.policy, learner_policy(cfg, learner)
            return own
        return HFPolicy(learner.path, tokenizer=copy.deepcopy(learner.tokenizer), seed=cfg.seed,
                        device=str(next(learner.model.parameters()).device),
                        kv_reuse=cfg.rollout.kv_reuse, kv_cache_mb=cfg.rollout.kv_cache_mb)

    if team.single:
        learner = team.learners[0]
        engines: Any = engine(learner)
        weights: Any = rollout_weights(learner.model)
    else:
        engines = {lr.name: engine(lr) for lr in team.learners}
        weights = {lr.name: rollout_weights(lr.model) for lr in team.learners}
    thread = AsyncRollouts(produce, engines, max_staleness=cfg.rollout.max_staleness,
                           weight_sync=cfg.rollout.weight_sync, start=start, last=cfg.steps,
                           saved=saved)
    thread.start(start, weights, run)
    return thread


def learner_policy(cfg: Any, learner: Any) -> Any:
    """The learner's side of a vLLM run under asynchrony: an HF policy on the learner's own
    module (as the `hf` backend's rollout policy is), for evaluation and IG's scoring."""
    from envgym.agents.learner import unwrap
    from envgym.agents.policies.hf import HFPolicy

    return HFPolicy(learner.path, model=unwrap(learner.model), tokenizer=learner.tokenizer,
                    seed=cfg.seed, kv_reuse=cfg.rollout.kv_reuse,
                    kv_cache_mb=cfg.rollout.kv_cache_mb, autocast=cfg.model.dtype)


def publish_update(thread: AsyncRollouts, learner: Any, step: int, run: RunState) -> None:
    """Step 6 asynchronously, for one learner: version `step` of its policy (weights and run
    state) for the thread. The trainer calls it as each learner's update ends, so with one
    learner per agent the thread may load one agent's new version while the next trains."""
    from envgym.agents.fsdp import rollout_weights
    from envgym.agents.learner import unwrap

    thread.publish(step, rollout_weights(learner.model), run, learner.name)
    unwrap(learner.model).eval()  # as the synchronous sync leaves it (evaluation follows)


def learner_batch(got: StepRollouts, step: int, cfg: Any,
                  learner_version: int | dict[str | None, int] | None = None
                  ) -> tuple[list[Trajectory], dict[int, list[int]], dict[str, float], list[int]]:
    """The learner's view of step `step`'s rollouts, trained at `learner_version` (each
    agent's learner's own, `{agent: version}`; default step-1, the one shared policy's):
    the bound applied (`rollout.stale`) per agent, the staleness histogram and the counts."""
    n = cfg.rollout.max_staleness
    now = step - 1 if learner_version is None else learner_version
    metrics, values = staleness_metrics(got.trajs, now, n)
    trajs, masked, dropped = bound_staleness(got.trajs, now, n, cfg.rollout.stale)
    metrics["async/dropped_stale"] = float(dropped)
    metrics["async/masked_stale_turns"] = float(sum(map(len, masked.values())))
    return trajs, masked, metrics, values

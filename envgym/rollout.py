"""The rollout engine: many episodes at once, token-in token-out.

Public API:

* `collect(env_id, policy, *, episodes, group_size=1, seed=0, ...) -> list[Trajectory]` runs
  `episodes` tasks × `group_size` samples of a single-agent `TextEnv`. Task j uses env seed
  `seed + j` for all G members of its group (`group_id = f"{env_id}/{seed + j}"`), which is what
  GRPO-style methods need. `policy` is a `Policy` (hf, openai, vllm), a spec string (also
  `scripted:NAME`), or a scripted factory `factory(seed) -> ScriptedPolicy`; scripted policies
  get a fresh instance per episode (seed `seed + 1000 * j + member`) and are called as
  `act(env, messages)`.
* `collect_multi(env_id, policies, ...)` does the same for a `MultiAgentTextEnv` (PettingZoo
  parallel API) with a policy per agent: one Trajectory per agent per episode, all with the
  episode's `group_id`.
* `branch(env, prefix, turn, k, policy)` is SLATE's truncated branching: replay `prefix` up to
  `turn`, `fork()` the environment k times and sample k one-turn continuations from the shared
  prefix in one batched call.

How it runs. Each episode is a coroutine; environment `reset`/`step` (and scripted `act`) run
in a thread pool, never on the event loop, under `step_timeout`. The pool has at most
`ENV_THREADS` workers (32, or `$ENVGYM_ENV_THREADS`) however many episodes are in flight
(`concurrency`): enough to overlap environments that wait on sandboxes, servers or judges,
while CPU-bound steps cannot use more threads than cores anyway and each thread costs memory.
Waiting for a free worker is not counted as step time. A policy's prompts are
gathered by a batcher (`envgym.batcher`, which states its rule): a turn costs one batched
call, and a straggler joins the next call rather than holding up the rest. An exception or
timeout in an environment ends *that* episode as failed (`Trajectory.error`, outcome
`{"success": False, "score": 0.0}`); the rest
of the batch carries on. A policy failure fails the episodes of that call.

Seeds. Every sampled turn has its own seed, `mix_seed(run seed, episode seed, member,
agent, turn)` (run seed = `sampling.seed`, else `seed`), handed to the policy per row: the
same call gives the same trajectories whatever the concurrency or batch composition.

Tokens. For token policies the engine keeps each turn's prompt as token ids: the sampled ids
are appended as they were sampled, and only the new observation messages are tokenised, as
the chat-template delta (`envgym.tokens.ChatTokenizer.observation_ids`). So
`Trajectory.token_sequence()` is exactly what the policy saw and produced, with loss mask 1
on sampled tokens only. Character `spans` in step infos are mapped to token ranges.

Finished trajectories stream to `writer` (a path or `TrajectoryWriter`, one fsync'd line
each) as they complete; `progress=True` shows a bar and a summary on stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from envgym.batcher import Batcher
from envgym.errors import PolicyError
from envgym.policy import (Completion, SamplingParams, ScriptedFactory, is_token_policy,
                           load_policy, mix_seed)
from envgym.spaces import Message
from envgym.stops import cut_at_stop, first_stop_end, with_stops
from envgym.tokens import char_to_token_spans
from envgym.trajectory import Span, Trajectory, TrajectoryWriter, Turn

__all__ = ["branch", "collect", "collect_multi"]

FAILED = {"success": False, "score": 0.0}
ENV_THREADS = int(os.environ.get("ENVGYM_ENV_THREADS") or 32)
"""Worker threads for environment calls per engine (see the module docstring)."""
_KNOWN_INFO = {"task_id", "turn", "reward_components", "spans", "role", "state_key", "outcome",
               "trajectory_meta"}


# ---- public API --------------------------------------------------------------------------


def collect(env_id: str | Callable[[], Any], policy: Any, *, episodes: int, group_size: int = 1,
            seed: int = 0, env_kwargs: dict[str, Any] | None = None, max_turns: int | None = None,
            sampling: SamplingParams | None = None, step_timeout: float = 300.0,
            concurrency: int = 64, batch_wait: float = 0.05, writer: Any = None,
            progress: bool = False) -> list[Trajectory]:
    """Run `episodes × group_size` single-agent episodes; trajectories in task order."""
    return _run(env_id, {None: policy}, episodes, group_size, seed, env_kwargs, max_turns,
                sampling, step_timeout, concurrency, batch_wait, writer, progress, multi=False)


def collect_multi(env_id: str | Callable[[], Any], policies: dict[str, Any], *, episodes: int,
                  group_size: int = 1, seed: int = 0, env_kwargs: dict[str, Any] | None = None,
                  max_turns: int | None = None, sampling: SamplingParams | None = None,
                  step_timeout: float = 300.0, concurrency: int = 64, batch_wait: float = 0.05,
                  writer: Any = None, progress: bool = False) -> list[Trajectory]:
    """Multi-agent episodes, one policy per agent (`"*"` is the default for unnamed agents)."""
    return _run(env_id, policies, episodes, group_size, seed, env_kwargs, max_turns, sampling,
                step_timeout, concurrency, batch_wait, writer, progress, multi=True)


def branch(env: Any, prefix: Trajectory, turn: int, k: int, policy: Any, *,
           sampling: SamplingParams | None = None) -> list[Trajectory]:
    """k one-turn continuations of `prefix` at `turn` (0-based), from forks of one state.

    `env` is reset with `prefix.seed` and replays `prefix`'s first `turn` actions (which must
    reproduce its observations); each of the k forks then takes one sampled action. Every
    result holds the shared prefix turns plus its own turn, with
    `group_id = f"{prefix.group_id}/branch{turn}"` so SLATE normalises over siblings.
    """
    if not 0 <= turn < len(prefix.turns):
        raise ValueError(f"turn {turn} is outside the prefix's {len(prefix.turns)} turns")
    policy = load_policy(policy) if isinstance(policy, str) else policy
    obs, _ = env.reset(seed=prefix.seed)
    messages = list(obs)
    for past in prefix.turns[:turn]:
        obs, *_ = env.step(past.action)
        messages += [_assistant(past.action, messages), *obs]
    if _as_recorded(obs) != _as_recorded(prefix.turns[turn].observation):
        raise PolicyError("branch(): replaying the prefix did not reproduce its observations; "
                          "the environment is not deterministic given seed and actions.")
    forks = [env.fork() for _ in range(k)]
    ids = [i for t in prefix.turns[:turn] for i in t.obs_token_ids + t.action_token_ids]
    ids += prefix.turns[turn].obs_token_ids
    prompts = [ids] * k if is_token_policy(policy) else [messages] * k
    stops = tuple(getattr(env, "stop_sequences", ()) or ())
    sampling = with_stops(sampling or SamplingParams(seed=prefix.seed), stops)
    decode = getattr(_chat(policy), "decode", None)
    completions = [cut_at_stop(c, stops, decode) for c in policy.generate(prompts, sampling)]
    out = []
    for fork, c in zip(forks, completions):
        result = fork.step(c.text)
        fork.close()
        head = [t.model_copy(deep=True) for t in prefix.turns[:turn]]
        t = prefix.model_copy(update={"turns": head, "group_id": f"{prefix.group_id}/branch{turn}",
                                      "meta": {**prefix.meta, "branch_turn": turn}})
        t.turns.append(_make_turn(prefix.turns[turn].observation, prefix.turns[turn].obs_token_ids,
                                  c.text, c, result[1], result[4], policy))
        _finish(t, result[0], result[2], result[3], result[4])
        out.append(t)
    return out


# ---- one agent's view of one episode -----------------------------------------------------


@dataclass
class _Seat:
    traj: Trajectory
    actor: Any                     # a Policy, or a ScriptedPolicy instance
    batcher: Batcher | None
    key: tuple[int, ...] = ()
    """(episode seed, member, agent index): with the run seed and turn, the sampling seed."""
    messages: list[Message] = field(default_factory=list)
    obs: list[Message] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    obs_ids: list[int] = field(default_factory=list)
    ended_with_eos: bool = True
    spliced: bool = False
    left: bool = False

    def observe(self, obs: list[Message]) -> None:
        """Take in new observation messages (and their template-delta ids)."""
        chat = _chat(self.actor)
        if chat is not None:
            if self.messages:
                self.obs_ids, self.spliced = chat.observation_ids(self.messages, obs,
                                                                  self.ended_with_eos)
            else:
                self.obs_ids = chat.prompt_ids(obs)
            self.ids += self.obs_ids
        if not self.spliced:
            obs = [{**m, "role": "user"} if m.get("role") == "continuation" else m for m in obs]
        self.obs = list(obs)
        self.messages += obs

    def record(self, text: str, completion: Completion | None, reward: float,
               info: dict[str, Any]) -> None:
        self.traj.turns.append(_make_turn(self.obs, self.obs_ids, text, completion, reward,
                                          info, self.actor))
        role = "continuation" if self.spliced else "assistant"
        self.messages.append({"role": role, "content": text})
        if completion is not None:
            self.ids += completion.token_ids
            self.ended_with_eos = completion.ended_with_eos


# ---- the engine --------------------------------------------------------------------------


class _Engine:
    def __init__(self, env_id, policies, sampling, seed, step_timeout, concurrency, batch_wait,
                 env_kwargs, max_turns):
        self.env_id = env_id if isinstance(env_id, str) else getattr(env_id, "__name__", "env")
        self.make = env_id if callable(env_id) else _maker(env_id, env_kwargs, max_turns)
        self.policies = {a: _resolve(p, self.env_id) for a, p in policies.items()}
        self.sampling, self.seed = sampling or SamplingParams(), seed
        self.run_seed = self.sampling.seed if self.sampling.seed is not None else seed
        self.step_timeout, self.max_turns = step_timeout, max_turns or 1000
        threads = max(1, min(concurrency, ENV_THREADS))
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="envgym-env")
        self.free = asyncio.Semaphore(threads)
        self.slots = asyncio.Semaphore(concurrency)
        self.batchers = {id(p): Batcher(p, self.sampling, batch_wait)
                         for p in self.policies.values() if not isinstance(p, ScriptedFactory)}

    async def in_thread(self, seats: Sequence[_Seat], fn: Callable, *args: Any) -> Any:
        """Run blocking work off the loop, marking the seats away from their batchers."""
        batchers = [s.batcher for s in seats if s.batcher]
        for b in batchers:
            b.away += 1
        try:
            return await self.call(fn, *args)
        except asyncio.TimeoutError:
            raise TimeoutError(f"{getattr(fn, '__name__', 'call')} exceeded the step timeout "
                               f"of {self.step_timeout}s") from None
        finally:
            for b in batchers:
                b.away -= 1
                b.kick()

    async def call(self, fn: Callable, *args: Any) -> Any:
        """`fn(*args)` on a worker thread, timed from when a worker picks it up.

        A worker is reserved first (`free`), and handed back only when the thread really
        finishes: a call that timed out keeps its worker busy until it returns.
        """
        loop = asyncio.get_running_loop()
        await self.free.acquire()
        future = self.pool.submit(fn, *args)
        future.add_done_callback(lambda _: _call_soon(loop, self.free.release))
        return await asyncio.wait_for(asyncio.wrap_future(future), self.step_timeout)

    def seat(self, agent: str | None, traj: Trajectory, actor_seed: int,
             key: tuple[int, ...] = ()) -> _Seat:
        policy = self.policies.get(agent, self.policies.get("*", self.policies.get(None)))
        if policy is None:
            raise PolicyError(f"no policy for agent {agent!r}; pass one per agent or '*'.")
        traj.policy = getattr(policy, "name", repr(policy))
        if isinstance(policy, ScriptedFactory):
            return _Seat(traj, policy(seed=actor_seed), None)
        seat = _Seat(traj, policy, self.batchers[id(policy)], key)
        seat.batcher.members += 1
        return seat

    def adopt_stops(self, env: Any) -> None:
        """Every batcher samples with the environment's `stop_sequences` (one env id per run,
        so every instance declares the same ones)."""
        self.stops = tuple(getattr(env, "stop_sequences", ()) or ())
        for b in self.batchers.values():
            b.sampling = with_stops(b.sampling, self.stops)

    async def act(self, env: Any, seat: _Seat) -> tuple[str, Completion | None]:
        """The next action, cut after the first stop string whatever the backend did."""
        stops = getattr(self, "stops", ())
        if seat.batcher is None:
            text = str(await self.in_thread([seat], seat.actor.act, env, list(seat.messages)))
            end = first_stop_end(text, stops)
            return (text if end is None else text[:end]), None
        prompt = seat.ids if is_token_policy(seat.actor) else _merged(seat.messages)
        seed = mix_seed(self.run_seed, *seat.key, len(seat.traj.turns))
        completion = cut_at_stop(await seat.batcher.submit(prompt, seed), stops,
                                 getattr(_chat(seat.actor), "decode", None))
        return completion.text, completion

    async def single(self, task: int, member: int, seed: int) -> Trajectory:
        traj = Trajectory(env_id=self.env_id, seed=seed, group_id=f"{self.env_id}/{seed}",
                          meta={"member": member})
        async with self.slots:
            env, seat = None, None
            try:
                seat = self.seat(None, traj, self.seed + 1000 * task + member, (seed, member, 0))
                env = await self.in_thread([seat], self.make)
                self.adopt_stops(env)
                obs, info = await self.in_thread([seat], lambda: env.reset(seed=seed))
                traj.task_id = info.get("task_id")
                seat.observe(obs)
                for _ in range(self.max_turns):
                    text, completion = await self.act(env, seat)
                    obs, reward, term, trunc, info = await self.in_thread([seat], env.step, text)
                    seat.record(text, completion, reward, info)
                    if term or trunc:
                        return _finish(traj, obs, term, trunc, info)
                    seat.observe(obs)
                traj.truncated, traj.meta["truncation"] = True, "engine_max_turns"
                return traj
            except Exception as e:  # noqa: BLE001 - a failed episode, never a crashed batch
                return _fail(traj, e)
            finally:
                await self.release(env, [seat] if seat else [])

    @staticmethod
    def leave(seat: _Seat) -> None:
        """Take a finished seat out of its batcher's count (once)."""
        if seat.batcher and not seat.left:
            seat.left = True
            seat.batcher.leave()

    async def multi(self, task: int, member: int, seed: int) -> list[Trajectory]:
        group = f"{self.env_id}/{seed}"
        async with self.slots:
            env, seats = None, {}
            try:
                env = await self.in_thread([], self.make)
                self.adopt_stops(env)
                for i, agent in enumerate(env.possible_agents):
                    traj = Trajectory(env_id=self.env_id, seed=seed, group_id=group,
                                      agent_id=agent, meta={"member": member})
                    actor_seed = self.seed + 1000 * task + 100 * member + i
                    seats[agent] = self.seat(agent, traj, actor_seed, (seed, member, i))
                obs, infos = await self.in_thread(list(seats.values()),
                                                  lambda: env.reset(seed=seed))
                for agent, seat in seats.items():
                    seat.traj.task_id = (infos.get(agent) or {}).get("task_id")
                    seat.observe(list(obs.get(agent, [])))
                for _ in range(self.max_turns):
                    live = [a for a in env.agents if a in seats]
                    if not live:
                        break
                    acts = await asyncio.gather(*(self.act(env, seats[a]) for a in live))
                    obs, rewards, terms, truncs, infos = await self.in_thread(
                        list(seats.values()), env.step, {a: t for a, (t, _) in zip(live, acts)})
                    for a, (text, completion) in zip(live, acts):
                        seats[a].record(text, completion, float(rewards.get(a, 0.0)),
                                        infos.get(a, {}))
                        if terms.get(a) or truncs.get(a):
                            _finish(seats[a].traj, obs.get(a, []), bool(terms.get(a)),
                                    bool(truncs.get(a)), infos.get(a, {}))
                            self.leave(seats[a])
                        else:
                            seats[a].observe(list(obs.get(a, [])))
                return [s.traj for s in seats.values()]
            except Exception as e:  # noqa: BLE001
                return [_fail(s.traj, e) for s in seats.values()] or [
                    _fail(Trajectory(env_id=self.env_id, seed=seed, group_id=group), e)]
            finally:
                await self.release(env, list(seats.values()))

    async def release(self, env: Any, seats: list[_Seat]) -> None:
        for s in seats:
            self.leave(s)
            free = getattr(s.actor, "release", None) if s.batcher else None
            if free is not None and s.ids:  # the policy's cached KV of this episode
                free(s.ids)
        if env is not None:
            try:
                await self.call(env.close)
            except Exception:  # noqa: BLE001 - closing a broken env must not fail the episode
                pass


def _run(env_id, policies, episodes, group_size, seed, env_kwargs, max_turns, sampling,
         step_timeout, concurrency, batch_wait, writer, progress, multi) -> list[Trajectory]:
    own_writer = isinstance(writer, (str, bytes)) or hasattr(writer, "__fspath__")
    writer = TrajectoryWriter(writer) if own_writer else writer

    async def main() -> list[Trajectory]:
        engine = _Engine(env_id, policies, sampling, seed, step_timeout, concurrency, batch_wait,
                         env_kwargs, max_turns)
        runner = engine.multi if multi else engine.single
        jobs = [runner(j, m, seed + j) for j in range(episodes) for m in range(group_size)]
        with _Progress(progress, len(jobs), engine.env_id) as bar:
            async def one(job):
                result = await job
                for t in result if isinstance(result, list) else [result]:
                    if writer is not None:
                        writer.write(t)
                    bar.record(t)
                bar.advance()
                return result
            results = await asyncio.gather(*(one(j) for j in jobs))
        engine.pool.shutdown(wait=False)
        for b in engine.batchers.values():
            b.pool.shutdown(wait=False)
        return [t for r in results for t in (r if isinstance(r, list) else [r])]

    try:
        return asyncio.run(main())
    finally:
        if own_writer:
            writer.close()


# ---- helpers ---------------------------------------------------------------------------


def _call_soon(loop: asyncio.AbstractEventLoop, fn: Callable) -> None:
    """Schedule `fn` on `loop` from a worker thread; a loop already closed needs nothing."""
    try:
        loop.call_soon_threadsafe(fn)
    except RuntimeError:
        pass


def _resolve(policy: Any, env_id: str) -> Any:
    if isinstance(policy, str):
        return load_policy(policy, env_id=env_id) if policy.startswith("scripted:") \
            else load_policy(policy)
    if isinstance(policy, type) or (callable(policy) and not hasattr(policy, "generate")
                                    and not isinstance(policy, ScriptedFactory)):
        return ScriptedFactory(getattr(policy, "__name__", "custom"), policy)
    return policy


def _maker(env_id: str, env_kwargs: dict[str, Any] | None, max_turns: int | None) -> Callable:
    from envgym.registration import make
    kwargs = dict(env_kwargs or {}) | ({"max_turns": max_turns} if max_turns else {})
    return lambda: make(env_id, **kwargs)


def _chat(actor: Any) -> Any:
    return getattr(actor, "chat", None) if is_token_policy(actor) else None


def _merged(messages: list[Message]) -> list[Message]:
    from envgym.tokens import merge_messages
    return merge_messages(messages)


def _as_recorded(obs: list[Message]) -> list[Message]:
    """Observations as a trajectory records them: a continuation that could not be spliced
    (the action ended with EOS) is stored as a user turn, so compare without that role."""
    return [{**m, "role": "user"} if m.get("role") == "continuation" else m for m in obs]


def _assistant(text: str, messages: list[Message]) -> Message:
    spliced = bool(messages) and messages[-1].get("role") == "continuation"
    return {"role": "continuation" if spliced else "assistant", "content": text}


def _make_turn(obs, obs_ids, text, completion, reward, info, actor) -> Turn:
    spans = [Span(**s) if isinstance(s, dict) else s for s in info.get("spans", []) or []]
    chat = _chat(actor)
    if completion is not None and chat is not None and spans:
        ranges = char_to_token_spans(chat.decode, completion.token_ids,
                                     [(s.start, s.end) for s in spans])
        spans = [s.model_copy(update={"token_start": a, "token_end": b})
                 for s, (a, b) in zip(spans, ranges)]
    return Turn(observation=list(obs), action=text, obs_token_ids=list(obs_ids),
                action_token_ids=list(completion.token_ids) if completion else [],
                action_logprobs=list(completion.logprobs) if completion else [],
                finish_reason=completion.finish_reason if completion else None,
                reward=float(reward), reward_components=dict(info.get("reward_components", {})),
                spans=spans, role=info.get("role"), state_key=info.get("state_key"),
                info=_jsonable({k: v for k, v in info.items() if k not in _KNOWN_INFO}))


def _finish(traj: Trajectory, obs, term: bool, trunc: bool, info: dict[str, Any]) -> Trajectory:
    traj.terminated, traj.truncated = bool(term), bool(trunc)
    traj.final_observation = list(obs)
    traj.outcome = _jsonable(dict(info.get("outcome") or {}))
    traj.meta.update(_jsonable(dict(info.get("trajectory_meta") or {})))  # env-written structure
    return traj


def _fail(traj: Trajectory, error: BaseException) -> Trajectory:
    traj.error = f"{type(error).__name__}: {error}"
    traj.outcome = dict(FAILED)
    return traj


def _jsonable(value: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(value, default=str))


class _Progress:
    """A rich progress bar and final summary on stderr (no-op when disabled)."""

    def __init__(self, enabled: bool, total: int, label: str):
        self.enabled, self.total, self.label = enabled, total, label
        self.rewards: list[float] = []
        self.successes = self.errors = 0

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import Progress
            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.total)
        return self

    def record(self, traj: Trajectory) -> None:
        """Failed episodes are counted apart, never averaged in as zero rewards."""
        if traj.error is not None:
            self.errors += 1
            return
        self.rewards.append(traj.total_reward)
        self.successes += traj.success

    def advance(self) -> None:
        if self.enabled:
            self.bar.advance(self.task)

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.bar.stop()
            n = max(1, len(self.rewards))
            scored = (f"train_reward {sum(self.rewards) / n:.3f} (shaping included), success "
                      f"{self.successes / n:.3f}" if self.rewards else "nothing to score")
            print(f"{self.label}: {len(self.rewards)} completed trajectories, {scored}; "
                  f"{self.errors} failed (not scored)", file=sys.stderr)

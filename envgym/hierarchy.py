"""ARTIST's rollout structure: C controller rollouts per question, each forked at its answer
turn into N reasoner samples that answer from the same inspected evidence.

    trajs = collect_hierarchical("envgym/TimeSeries-v0", policy, episodes=4,
                                 controllers=2, samples=6, run=run)

How. The engine (`collect`) runs C = `controllers` episodes of every question (the group).
For each episode that reached an answer turn, the environment is replayed to the state just
before that turn and forked N - 1 times with `env.answer_fork()` (zooming over, only a
reasoner answer accepted); the N - 1 answers are sampled in one batched `generate` from the
controller rollout's own prefix tokens, so every sample shares its controller's prefix
exactly. The episode's own answer is sample 0 (ARTIST: "the loop's own answer plus 5 more").

Temperatures. ARTIST samples the controller at 1.0 and the reasoner at 0.7
(`controller_temperature`, `reasoner_temperature`; both default to `sampling.temperature`).
The engine runs the controller's turns at the controller's temperature; the N answers are
sampled at the reasoner's. Where the two differ and the episode's own answer was sampled in
the reasoner's state (zooming over: after ACCEPT or the last round, as the replayed
environment says), that answer was drawn at the controller's temperature, so it is replaced
by a fresh sample at the reasoner's from the same prefix (one extra answer per controller
rollout). An answer the controller gave instead of zooming (no ACCEPT first) is a controller
decision and keeps its temperature. Every sampled turn records its `temperature`; the
learner scores each token at it.

What every trajectory carries in `meta` (the hierarchical estimator reads it and refuses a
batch without it): `question` (the group), `controller_id` (one per controller rollout),
`sample` (0 for the controller rollout itself, 1..N-1 for forks), `fork_turn` (index of the
answer turn: earlier turns are the shared prefix), `reasoner_samples` (N) and `consistency`.

Rewards by role. The environment reports each step's `info["role_components"]`. Here the
answer turn's controller part gets ARTIST's consistency term 3·c with c the mean accuracy over
the N samples of that controller rollout (the same value on every sample); each sample keeps
its own accuracy and format as its reasoner part. Turn rewards and `reward_components` are
rewritten to match, so totals and components always agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from envgym.errors import PolicyError
from envgym.policy import SamplingParams, ScriptedFactory, is_token_policy, mix_seed
from envgym.rollout import _assistant, _chat, _finish, _make_turn, _merged, _resolve, collect
from envgym.runstate import RunState, env_factory
from envgym.stops import cut_at_stop, with_stops
from envgym.trajectory import Trajectory

__all__ = ["CONSISTENCY_WEIGHT", "collect_hierarchical", "credit_consistency"]

CONSISTENCY_WEIGHT = 3.0
"""ARTIST's R_c = 3c + ...: the weight of the consistency term (methods reference §5.2)."""


def collect_hierarchical(env_id: str, policy: Any, *, episodes: int, controllers: int = 2,
                         samples: int = 6, seed: int = 0, env_kwargs: dict[str, Any] | None = None,
                         sampling: SamplingParams | None = None, run: RunState | None = None,
                         controller_temperature: float | None = None,
                         reasoner_temperature: float | None = None,
                         **engine: Any) -> list[Trajectory]:
    """`episodes` questions × `controllers` controller rollouts × `samples` reasoner samples
    (see the module docstring); per controller rollout, the rollout itself then its forks.
    The two temperatures default to `sampling.temperature`."""
    if controllers < 1:
        raise ValueError(f"controllers must be >= 1, got {controllers}")
    if samples < 2:
        raise ValueError(f"reasoner samples must be >= 2, got {samples}: ARTIST's reasoner "
                         "advantage compares the N samples of one controller rollout, so with "
                         "one sample every reasoner advantage is 0 (ARTIST uses N = 6)")
    kwargs = dict(env_kwargs or {})
    source = env_factory(env_id, kwargs, run)
    policy = _resolve(policy, env_id)
    sampling = sampling or SamplingParams()
    ctrl = replace(sampling, temperature=_or(controller_temperature, sampling.temperature))
    reas = replace(sampling, temperature=_or(reasoner_temperature, sampling.temperature))
    heads = collect(source, policy, episodes=episodes, group_size=controllers, seed=seed,
                    env_kwargs=kwargs, sampling=ctrl, **engine)
    scripted = isinstance(policy, ScriptedFactory)
    for h in heads:
        h.meta.update(question=h.group_id, sample=0, fork_turn=len(h.turns) - 1,
                      controller_id=f"{h.group_id}/c{h.meta.get('member', 0)}")
        for turn in h.turns:  # what the engine sampled them at (scripts sample nothing)
            turn.temperature = None if scripted else ctrl.temperature
    maker = source if callable(source) else _registry_maker(env_id, kwargs)
    resample = not scripted and reas.temperature != ctrl.temperature
    forks = _fork_answers(maker, heads, samples, policy, reas, resample)
    out: list[Trajectory] = []
    for n, h in enumerate(heads):
        mine = forks.get(n, [])
        if mine and mine[0].meta["sample"] == 0:  # the answer resampled at the reasoner's T
            h, mine = mine[0], mine[1:]
        group = [h, *mine]
        credit_consistency(group)
        out += group
    return out


def credit_consistency(group: list[Trajectory]) -> float:
    """Set c = mean accuracy over the samples of one controller rollout and credit 3·c to the
    controller part of every sample's answer turn; returns c. A controller rollout that
    never answered has c = 0 and no answer turn to rewrite."""
    turns = [_answer_turn(t) for t in group]
    accs = [float(tt.info["accuracy"]) if tt is not None else 0.0 for tt in turns]
    c = sum(accs) / len(accs) if accs else 0.0
    for t in group:
        t.meta.update(consistency=c, reasoner_samples=len(group))
        turn = _answer_turn(t)
        if turn is None:
            continue
        roles = turn.info["role_components"]
        if "consistency" in roles.get("controller", {}):
            roles["controller"]["consistency"] = CONSISTENCY_WEIGHT * c
        turn.reward_components = {k: float(v) for part in roles.values() for k, v in part.items()}
        turn.reward = float(sum(turn.reward_components.values()))
    return c


def _answer_turn(traj: Trajectory) -> Any:
    """The turn that answered (it reports the reasoner's `accuracy`), if the episode did."""
    if traj.error is None and traj.turns and "accuracy" in traj.turns[-1].info:
        return traj.turns[-1]
    return None


def _fork_answers(maker: Callable[[], Any], heads: list[Trajectory], samples: int, policy: Any,
                  sampling: SamplingParams, resample: bool) -> dict[int, list[Trajectory]]:
    """The reasoner samples of each answered head, keyed by the head's index: samples 1..N-1,
    led by a new sample 0 where `resample` and the head's answer was the reasoner's (see the
    module docstring)."""
    jobs = []
    for n, h in enumerate(heads):
        if _answer_turn(h) is None:
            continue
        forks, messages, answer_due = _replay(maker, h, samples)
        first = 0 if resample and answer_due else 1
        for fork in forks[:first]:  # the state answer_fork copies stays unused: close it
            fork.close()
        jobs.append((n, h, forks[first:], messages, first))
    if not jobs:
        return {}
    actions = _sample(policy, jobs, sampling)
    out: dict[int, list[Trajectory]] = {}
    for (n, head, forks, _messages, first), acts in zip(jobs, actions, strict=True):
        out[n] = [_fork_trajectory(head, fork, text, completion, first + j, policy,
                                   sampling.temperature)
                  for j, (fork, (text, completion)) in enumerate(zip(forks, acts, strict=True))]
    return out


def _replay(maker: Callable[[], Any], head: Trajectory, k: int) -> tuple[list[Any], list, bool]:
    """Reset with the head's seed, replay all but its answer turn, fork k answer states; and
    whether that state was already the reasoner's (the env's `answering`: zooming over)."""
    env = maker()
    try:
        obs, _ = env.reset(seed=head.seed)
        messages = list(obs)
        for past in head.turns[:-1]:
            obs, *_ = env.step(past.action)
            messages += [_assistant(past.action, messages), *obs]
        if list(obs) != head.turns[-1].observation:
            raise PolicyError(f"collect_hierarchical: replaying {head.group_id} did not "
                              "reproduce its observations; the environment is not "
                              "deterministic given seed and actions.")
        return [env.answer_fork() for _ in range(k)], messages, _answer_due(env)
    finally:
        env.close()


def _answer_due(env: Any) -> bool:
    """The environment's own state says the next turn is the reasoner's answer."""
    return bool(getattr(env, "answering", False))


def _sample(policy: Any, jobs: list[tuple], sampling: SamplingParams) -> list[list]:
    """[(text, completion)] per fork of each job: one batched call for a model, `act` for
    scripts. A model's rows are seeded by (run seed, question seed, member, sample), so what
    a sample draws does not depend on which other heads share the call."""
    if isinstance(policy, ScriptedFactory):
        return [[(str(policy(seed=h.seed * 1009 + 97 * (first + j - 1) + _member(h))
                      .act(f, list(msgs))), None) for j, f in enumerate(forks)]
                for _n, h, forks, msgs, first in jobs]
    some = next((f for job in jobs for f in job[2]), None)
    stops = tuple(getattr(some, "stop_sequences", ()) or ()) if some is not None else ()
    prompts, rows = [], []
    base = (sampling.seed or 0) * 7919 + 17
    for _n, h, forks, msgs, first in jobs:
        if is_token_policy(policy):
            ids = [i for t in h.turns[:-1] for i in t.obs_token_ids + t.action_token_ids]
            prompts += [ids + h.turns[-1].obs_token_ids] * len(forks)
        else:
            prompts += [_merged(msgs)] * len(forks)
        rows += [mix_seed(base, h.seed or 0, _member(h), first + j) for j in range(len(forks))]
    if not prompts:
        return [[] for _ in jobs]
    params: Any = with_stops(sampling.with_seed(base), stops)
    if getattr(policy, "per_row_sampling", False):
        params = [params.with_seed(s) for s in rows]
    decode = getattr(_chat(policy), "decode", None)  # forks honour the env's stops, as collect
    done = [cut_at_stop(c, stops, decode) for c in policy.generate(prompts, params)]
    out, at = [], 0
    for job in jobs:
        out.append([(c.text, c) for c in done[at:at + len(job[2])]])
        at += len(job[2])
    return out


def _member(traj: Trajectory) -> int:
    return int(traj.meta.get("member", 0))


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def _fork_trajectory(head: Trajectory, fork: Any, text: str, completion: Any, sample: int,
                     policy: Any, temperature: float) -> Trajectory:
    """The head's prefix turns (copies) plus this sample's own answer turn."""
    try:
        obs, reward, term, trunc, info = fork.step(text)
    finally:
        fork.close()
    last = head.turns[-1]
    traj = head.model_copy(update={"turns": [t.model_copy(deep=True) for t in head.turns[:-1]],
                                   "meta": {**head.meta, "sample": sample}})
    turn = _make_turn(last.observation, last.obs_token_ids, text, completion, reward, info,
                      policy)
    turn.temperature = None if isinstance(policy, ScriptedFactory) else temperature
    traj.turns.append(turn)
    _finish(traj, obs, term, trunc, info)
    if not term:  # a malformed answer: the sample has no accuracy, only its format penalty
        traj.outcome = {"success": False, "score": 0.0, "unanswered": True}
    return traj


def _registry_maker(env_id: str, kwargs: dict[str, Any]) -> Callable[[], Any]:
    from envgym.registration import make
    return lambda: make(env_id, **kwargs)

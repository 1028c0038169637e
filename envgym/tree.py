"""SLATE's Algorithm 1: truncated step-level sampling, one tree of siblings per question.

    for each question (and each of `trees` independent trees of it):
        prefix = the chat-templated prompt
        for t = 1 .. B:
            k candidates from the shared prefix (one batched call over all live trees)
            each candidate is stepped in its own fork of the environment and judged:
                r_j = the step reward (Eq. 3 on search steps, Eq. 4 on the answer step)
            A_j = (r_j - mean r) / (std r + eps)                     (Eq. 5, unbiased std)
            continue from one candidate: sel ~ softmax(A / eta)      (eta <= 0: argmax)
            stop if it answered (or the episode ended); else splice its observation in
        still running after B steps: force the env's `forced_answer` opener (Search-v0:
        "\\n<answer>") and draw k answer candidates the same way (Eq. 4, no budget bonus);
        an environment without one simply stops after B steps

Every candidate becomes a `Trajectory`: the chosen path so far (shared prefix turns) plus
its own turn, with `meta = {"tree", "step", "sibling", "chosen", "branch_id", ...}`; the
`slate` credit normalises over each `branch_id` (the k siblings of one step) and trains only
the candidate turn. The last chosen candidate of a tree carries the whole path and outcome
(`meta["final"]`). Prefix tokens are the ids the engine recorded (token-in, token-out), so a
prefix that ended with EOS or a continuation observation is continued exactly as sampled.

The forced answer is a documented extension of the released loop, which generates one
answer and trains nothing on it: here it is k siblings like every other step, so it carries
signal too. Its forced "\\n<answer>" text is part of the observation (loss mask 0).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envgym.errors import InvalidConfig
from envgym.policy import Completion, SamplingParams, is_token_policy
from envgym.spaces import Message
from envgym.stops import cut_at_stop, with_stops
from envgym.trajectory import Trajectory, Turn

__all__ = ["failed_units", "final_paths", "rollout_units", "select", "slate_trees", "step_advantages",
           "tree_metrics"]


def step_advantages(rewards: Sequence[float], eps: float = 1e-6) -> np.ndarray:
    """Eq. 5: (r_j - mean r) / (std r + eps) over the k siblings, std unbiased (torch.std)."""
    r = np.asarray(rewards, dtype=np.float64)
    if r.size < 2:
        return np.zeros_like(r)
    return (r - r.mean()) / (r.std(ddof=1) + eps)


def select(advantages: np.ndarray, eta: float, rng: np.random.Generator) -> int:
    """The candidate to continue from: softmax(A / eta) sampling, argmax when eta <= 0."""
    if eta <= 0:
        return int(np.argmax(advantages))
    z = advantages / eta
    p = np.exp(z - z.max())
    return int(rng.choice(len(p), p=p / p.sum()))


@dataclass
class _Path:
    """The chosen path of one tree: its environment, recorded turns and prompt token ids."""

    tree: str
    member: int
    seed: int
    env: Any
    turns: list[Turn] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    obs: list[Message] = field(default_factory=list)
    obs_ids: list[int] = field(default_factory=list)
    ended_with_eos: bool = True
    task_id: str | None = None
    done: bool = False
    error: str | None = None


def slate_trees(env_id: str, policy: Any, *, first_seed: int, n_tasks: int, trees: int = 1,
                k: int = 5, budget: int = 4, eta: float = 0.7,
                env_kwargs: dict[str, Any] | None = None,
                sampling: SamplingParams | None = None, seed: int = 0) -> list[Trajectory]:
    """SLATE trees for `n_tasks` consecutive task seeds, `trees` per task (the module
    docstring gives the algorithm). The environment gets `max_turns = budget + 1` (the forced
    answer) and `slate_budget = budget` when it takes one. Bad settings raise
    `InvalidConfig`; a dead judge fails at `make()`, before anything is sampled.

    `k = 1` is plain sampling with the same forced answer (one candidate, always continued):
    `trees = G, k = 1` are G full-trajectory rollouts, GRPO's comparison point."""
    import envgym

    if k < 1 or budget < 0:
        raise InvalidConfig(f"slate_trees needs k >= 1 and budget >= 0 (got k={k}, "
                            f"budget={budget}); training needs k >= 2, or every step "
                            "advantage is 0.")
    if not is_token_policy(policy):
        raise InvalidConfig("SLATE trees continue from recorded token ids: use a token policy "
                            "(hf:, vllm:, openai: in token mode).")
    kwargs = {**(env_kwargs or {}), "max_turns": budget + 1}
    if _takes(env_id, "slate_budget"):
        kwargs["slate_budget"] = budget
    sampling = sampling or SamplingParams()
    rng = np.random.default_rng([seed, first_seed])
    paths = []
    for j in range(n_tasks):
        for m in range(trees):
            env = envgym.make(env_id, **kwargs)
            paths.append(_Path(f"{env_id}/{first_seed + j}/tree{m}", m, first_seed + j, env))
    out: list[Trajectory] = []
    calls = 0
    with ThreadPoolExecutor(min(32, k * len(paths)) or 1) as pool:
        for path in paths:
            _start(path, policy)
        for t in range(budget + 1):
            live = [p for p in paths if not p.done]
            if not live:
                break
            forced = getattr(live[0].env, "forced_answer", None)
            if t == budget and not forced:  # B steps done, and no way to force an answer
                break
            if t == budget:  # B steps done: the answer is forced
                for p in live:
                    _force_answer(p, policy, forced)
            step_sampling = with_stops(sampling, _stops(live[0].env, forced=t == budget)) \
                .with_seed((sampling.seed or seed) * 100_003 + calls)
            calls += 1
            out += _expand(live, policy, step_sampling, k, t, eta, rng, pool, env_id,
                           forced=forced if t == budget else "")
    for p in paths:
        if p.error is not None:
            out.append(_failed(p, env_id, policy))
        p.env.close()
    return _fail_whole_trees(out, {p.tree: p.error for p in paths if p.error is not None})


def _fail_whole_trees(out: list[Trajectory], errors: dict[str, str]) -> list[Trajectory]:
    """A tree that failed at any step fails as a whole: the siblings of its earlier steps
    carry the tree's error too, so they leave the batch with it and count as one failure
    (`rollout_units`), instead of training a truncated tree whose failures look rare."""
    for traj in out:
        err = errors.get(traj.meta.get("tree", ""))
        if err is not None and traj.error is None:
            traj.error = f"its tree failed: {err}"
    return out


def _unit(traj: Trajectory) -> str:
    tree = traj.meta.get("tree")
    return f"tree:{tree}" if tree else f"traj:{id(traj)}"


def rollout_units(trajs: Sequence[Trajectory]) -> int:
    """How many rollouts `trajs` are: a SLATE tree (all its siblings) is one, any other
    trajectory one each. `rollout.max_failed_fraction` compares failed units with these."""
    return len({_unit(t) for t in trajs})


def failed_units(failed: Sequence[Trajectory]) -> list[Trajectory]:
    """One failed trajectory per failed unit (the tree's own failure record when it has one),
    so reasons are counted per tree, not per sibling."""
    first: dict[str, Trajectory] = {}
    for t in failed:
        unit = _unit(t)
        if unit not in first or "sibling" not in t.meta:  # the tree's record wins
            first[unit] = t
    return list(first.values())


def _takes(env_id: str, name: str) -> bool:
    import inspect

    from envgym.registration import load_entry_point, spec
    try:
        cls = load_entry_point(spec(env_id).entry_point)
    except Exception:  # noqa: BLE001 - an unusual registration: pass no extra option
        return False
    return name in inspect.signature(cls).parameters


def _start(path: _Path, policy: Any) -> None:
    try:
        obs, info = path.env.reset(seed=path.seed)
    except Exception as e:  # noqa: BLE001 - a broken task fails its tree, not the batch
        path.done, path.error = True, f"reset failed: {type(e).__name__}: {e}"
        return
    path.task_id = info.get("task_id")
    path.obs, path.obs_ids = list(obs), policy.chat.prompt_ids(obs)
    path.messages, path.ids = list(obs), list(path.obs_ids)


def _stops(env: Any, forced: bool) -> tuple[str, ...]:
    """A forced step stops only where an answer ends (`forced_stop_sequences`, default the
    env's stops): `</search>` must not cut a forced answer short."""
    if forced and hasattr(env, "forced_stop_sequences"):
        return tuple(env.forced_stop_sequences)
    return tuple(getattr(env, "stop_sequences", ()))


def _force_answer(path: _Path, policy: Any, text: str) -> None:
    """Splice the env's answer opener ("\\n<answer>") into the pending observation: not
    sampled, so loss mask 0. An env with `force_answer()` parses the next step as an answer
    only, so no backend's output can turn it into a search."""
    if hasattr(path.env, "force_answer"):
        path.env.force_answer()
    forced = policy.chat.encode(text)
    path.obs = [*path.obs, {"role": "continuation", "content": text}]
    path.obs_ids = path.obs_ids + forced
    path.ids = path.ids + forced
    path.messages = [*path.messages, {"role": "continuation", "content": text}]


def _expand(live: list[_Path], policy: Any, sampling: SamplingParams, k: int, t: int, eta: float,
            rng: np.random.Generator, pool: ThreadPoolExecutor, env_id: str, forced: str
            ) -> list[Trajectory]:
    """One step of every live tree: k candidates each, judged, one continued."""
    try:
        completions = policy.generate([p.ids for p in live for _ in range(k)], sampling)
    except Exception as e:  # noqa: BLE001 - a policy failure fails these trees, visibly
        for p in live:
            p.done, p.error = True, f"policy failed: {type(e).__name__}: {e}"
        return []
    completions = [cut_at_stop(c, sampling.stop, policy.chat.decode) for c in completions]
    out = []
    for n, path in enumerate(live):
        mine = completions[n * k:(n + 1) * k]
        forks = [path.env.fork() for _ in range(k)]
        try:
            results = list(pool.map(lambda fc: fc[0].step(forced + fc[1].text), zip(forks, mine)))
        except Exception as e:  # noqa: BLE001 - an environment or judge failure fails the tree
            path.done, path.error = True, f"{type(e).__name__}: {e}"
            for f in forks:
                f.close()
            continue
        out += _siblings(path, forks, mine, results, policy, t, eta, rng, env_id, forced)
    return out


def _siblings(path: _Path, forks: list[Any], completions: list[Completion], results: list[tuple],
              policy: Any, t: int, eta: float, rng: np.random.Generator, env_id: str,
              forced: str) -> list[Trajectory]:
    from envgym.rollout import _finish, _make_turn

    rewards = [float(r[1]) for r in results]
    adv = step_advantages(rewards)
    sel = select(adv, eta, rng)
    branch_id = f"{path.tree}/step{t}"
    kids = []
    for j, (c, (obs, reward, term, trunc, info)) in enumerate(zip(completions, results)):
        turn = _make_turn(path.obs, path.obs_ids, c.text, c, reward, info, policy)
        if forced:
            turn.info["forced_prefix"] = forced
        kid = Trajectory(env_id=env_id, seed=path.seed, task_id=path.task_id,
                         group_id=f"{env_id}/{path.seed}", policy=getattr(policy, "name", None),
                         turns=[x.model_copy(deep=True) for x in path.turns] + [turn],
                         meta={"tree": path.tree, "member": path.member, "step": t,
                               "sibling": j, "chosen": j == sel, "branch_id": branch_id,
                               "forced_answer": bool(forced), "step_advantage": float(adv[j]),
                               "final": j == sel and bool(term or trunc)})
        if term or trunc:
            _finish(kid, obs, term, trunc, info)
        kids.append(kid)
    for j, f in enumerate(forks):
        if j != sel:
            f.close()
    _continue(path, forks[sel], completions[sel], results[sel], kids[sel].turns[-1], policy)
    return kids


def _continue(path: _Path, env: Any, completion: Completion, result: tuple, turn: Turn,
              policy: Any) -> None:
    """Move the tree's path onto the chosen candidate (and its observation)."""
    obs, _, term, trunc, _ = result
    path.env.close()
    path.env = env
    path.turns.append(copy.deepcopy(turn))
    spliced = bool(path.turns[:-1]) and path.messages[-1].get("role") == "continuation"
    role = "continuation" if spliced else "assistant"
    path.messages.append({"role": role, "content": completion.text})
    path.ids += completion.token_ids
    path.ended_with_eos = completion.ended_with_eos
    if term or trunc:
        path.done = True
        return
    obs_ids, spliced = policy.chat.observation_ids(path.messages, obs, path.ended_with_eos)
    if not spliced:
        obs = [{**m, "role": "user"} if m.get("role") == "continuation" else m for m in obs]
    path.obs, path.obs_ids = list(obs), obs_ids
    path.messages += obs
    path.ids += obs_ids


def _failed(path: _Path, env_id: str, policy: Any) -> Trajectory:
    """The tree's chosen path so far, marked failed with the error (never silently lost)."""
    traj = Trajectory(env_id=env_id, seed=path.seed, task_id=path.task_id,
                      group_id=f"{env_id}/{path.seed}", policy=getattr(policy, "name", None),
                      turns=path.turns, meta={"tree": path.tree, "member": path.member,
                                              "final": True})
    traj.error = path.error
    traj.outcome = {"success": False, "score": 0.0}
    return traj


def final_paths(trajs: Sequence[Trajectory]) -> list[Trajectory]:
    """One trajectory per episode: each tree's final path (or its failure record), and every
    trajectory that is not a tree sibling. Evaluation scores these, never the siblings."""
    kept = [t for t in trajs if "sibling" not in t.meta or t.meta.get("final")]
    done = {t.meta.get("tree") for t in kept if t.error is None and "tree" in t.meta}
    return [t for t in kept if t.error is None or t.meta.get("tree") not in done]


def _step_metrics(kids: Sequence[Trajectory]) -> dict[str, float]:
    """Names that say what they are, for a batch of siblings: `return` (and `reward`, the
    same number, for the progress bar) is the mean return of the trees' final paths,
    `step_reward` the mean reward of the candidate turns; `reward/NAME` the final paths'
    component totals and `step_reward/NAME` the candidates' components. A sibling's
    `total_reward` (its prefix plus its own turn) is neither, so nothing averages it."""
    finals = [t for t in kids if t.meta.get("final")]
    steps = [t.turns[-1] for t in kids if t.turns]
    keys = {k for t in kids for turn in t.turns for k in turn.reward_components}
    out = {"return": float(np.mean([t.total_reward for t in finals])) if finals else 0.0,
           "step_reward": float(np.mean([s.reward for s in steps])) if steps else 0.0}
    out["reward"] = out["return"]
    for k in sorted(keys):
        out[f"reward/{k}"] = float(np.mean([sum(x.reward_components.get(k, 0.0)
                                                for x in t.turns) for t in finals])) \
            if finals else 0.0
        out[f"step_reward/{k}"] = float(np.mean([s.reward_components.get(k, 0.0)
                                                 for s in steps])) if steps else 0.0
    return out


def tree_metrics(trajs: Sequence[Trajectory]) -> dict[str, float]:
    """`return`, `step_reward` (see `_step_metrics`; they replace the trainer's per-trajectory
    means, which mix prefixes) and `slate/*` metrics of a batch of tree siblings ({} when
    there are none): trees, siblings,
    the mean |A| of search-step and answer-step siblings (Eq. 5, before any credit chain),
    forced answers, and the EM of each tree's final path."""
    kids = [t for t in trajs if "tree" in t.meta and "sibling" in t.meta]
    if not kids:
        return {}
    search = [abs(t.meta["step_advantage"]) for t in kids
              if t.turns and any(s.kind == "query" for s in t.turns[-1].spans)]
    answer = [abs(t.meta["step_advantage"]) for t in kids if t.terminated]
    finals = [t for t in kids if t.meta.get("final")]
    return {**_step_metrics(kids), "slate/trees": float(len({t.meta["tree"] for t in kids})),
            "slate/siblings": float(len(kids)),
            "slate/search_siblings": float(len(search)),
            "slate/search_adv_abs_mean": float(np.mean(search)) if search else 0.0,
            "slate/answer_adv_abs_mean": float(np.mean(answer)) if answer else 0.0,
            "slate/forced_answers": float(sum(t.meta.get("forced_answer", False) and t.meta["chosen"]
                                              for t in kids)),
            "slate/final_em": float(np.mean([t.outcome.get("em", 0.0) for t in finals]))
            if finals else 0.0}

"""What a claim is, and how the runner trains, evaluates and summarises its arms.

A claim is a pre-registered paired experiment: two arms that differ in one thing (the method
against its baseline) with everything else equal, over several seeds. Per seed, one SFT warm
start is made and both arms train from it, so the pair shares its model, demonstrations and
tasks; a seed's arms differ only by the estimator (and what the claim file says). Every arm
is then evaluated on held-out tasks its training never saw, through `envgym.evaluation`, so
the environment's own aggregates (exact match, needless lookups, safety) are reported too.
"""

from __future__ import annotations

import copy
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Arm", "Claim", "run_claim", "summarise", "t_interval"]


@dataclass(frozen=True)
class Arm:
    name: str
    overrides: dict[str, Any]
    """Config keys that differ from the claim's base (nested dicts merge)."""


@dataclass(frozen=True)
class Claim:
    name: str
    paper: str
    hypothesis: str
    metric: str
    """The key of the per-(arm, seed) record the verdict is read from (higher is better)."""
    base: Callable[[int], dict[str, Any]]
    """The shared config for a seed (warm start, model, tasks, steps, learning rate)."""
    method: Arm
    baseline: Arm
    seeds: tuple[int, ...]
    budget_minutes: float
    eval_episodes: int
    lower_is_better: bool = False
    extra: Callable[[Path, list], dict[str, float]] | None = None
    """More measurements of one trained arm, from its run directory and its held-out
    trajectories."""
    notes: str = ""
    guards: dict[str, float] = field(default_factory=dict)
    """Metrics that must hold (e.g. safety rate): the claim is not reproduced when the paired
    interval lies wholly more than the tolerance below 0."""
    secondary: tuple[str, ...] = ()
    """More metrics summarised with their intervals, not part of the verdict."""
    v3: bool = False
    """Claims v3 (issue 37): every record carries the commit, the resolved config, every env
    kwarg and the warm start's own evaluation (`warm.*`); the runner refuses arms whose
    sampled episodes per step differ; records are copied to `bench/claims/records/<claim>/`."""
    mde: dict[str, float] = field(default_factory=dict)
    """The registered minimum detectable effect per metric, computed before the run from
    measured noise (`mde`)."""


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def t_interval(values: list[float]) -> dict[str, float]:
    """Mean with a two-sided 95% Student-t interval (few seeds: a normal one is too narrow)."""
    from scipy import stats

    n = len(values)
    mean = sum(values) / n if n else math.nan
    if n < 2:
        return {"mean": mean, "lo": math.nan, "hi": math.nan, "n": n}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    return {"mean": mean, "lo": mean - half, "hi": mean + half, "n": n}


def mde(sd_paired: float, seeds: int, power: float = 0.8) -> float:
    """The smallest true paired difference a two-sided 95% t-test over `seeds` paired seeds
    detects with probability `power`, given the paired differences' SD across seeds:
    (t_{0.975, n-1} + t_{power, n-1}) * sd / sqrt(n)."""
    from scipy import stats

    n = seeds
    return float((stats.t.ppf(0.975, n - 1) + stats.t.ppf(power, n - 1)) * sd_paired / math.sqrt(n))


def paired_sd(eval_episodes: int, p: float, seed_sd: float) -> float:
    """The SD across seeds of a paired difference of a rate: two independent evaluations of
    `eval_episodes` each (binomial, rate p) plus the training seed-to-seed spread measured in
    earlier runs (`seed_sd`, the SD of per-seed paired differences net of evaluation noise)."""
    return math.sqrt(2 * p * (1 - p) / eval_episodes + seed_sd ** 2)


_LOADED: dict[str, Any] = {}


def provenance() -> dict[str, Any]:
    """The commit whose code this process runs, and whether the files a claim depends on
    differed from it: read once, on the first call of the process, because Python keeps the
    modules it imported then. Reading HEAD per arm named a commit made while a long run was
    going (ig_search_base_v3's seed-15 GRPO record) although the process still ran the code
    it had loaded."""
    if not _LOADED:
        _LOADED.update(_git_provenance())
    return dict(_LOADED)


def _git_provenance() -> dict[str, Any]:
    import subprocess

    root = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                                  timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return ""
    dirty = git("status", "--porcelain", "--", "agents", "envgym", "environments", "bench/claims")
    return {"commit": git("rev-parse", "HEAD").strip() or "unknown",
            "dirty_files": [line[3:] for line in dirty.splitlines()
                            if len(line) > 3 and line[:2] != "??"]}


def episodes_per_step(cfg: Any) -> int:
    """Episodes sampled from reset per training step (ARTIST's reasoner forks are extra answer
    samples of those episodes, counted in `sampled_tokens_per_step`)."""
    return int(cfg.rollout.tasks_per_step * cfg.rollout.group_size)


def resolved(claim: Claim, arm: Arm, seed: int, warm: str, run_dir: Path,
             steps: int | None = None, smoke: bool = False) -> Any:
    from envgym.agents.config import load_config

    base = merge(claim.base(seed), SMOKE) if smoke else claim.base(seed)
    if steps is not None:
        base["steps"] = steps
    return load_config(merge(merge(base, arm.overrides), {
        "output_dir": str(run_dir), "model": {"policy": warm, "warm_start": "none"}}))


def check_fair(claim: Claim, seed: int, steps: int | None = None, smoke: bool = False) -> int:
    """Refuse, before any work, arms that would sample different episodes per step."""
    counts = {a.name: episodes_per_step(resolved(claim, a, seed, "tiny", Path("unused"), steps,
                                                 smoke))
              for a in (claim.method, claim.baseline)}
    if len(set(counts.values())) != 1:
        raise SystemExit(f"claim {claim.name}: arms sample different episodes per step "
                         f"{counts}; a v3 claim compares equal sampling by construction")
    return next(iter(counts.values()))


def _warm_start(cfg: dict[str, Any], out: Path) -> str:
    """One SFT model per seed, shared by both arms."""
    from envgym.agents.config import load_config
    from envgym.agents.sft import run_sft

    sft_cfg = load_config(merge(cfg, {"output_dir": str(out)}))
    done = out / "sft" / "config.json"
    return str(done.parent if done.is_file() else run_sft(sft_cfg))


def _evaluate(claim: Claim, cfg: Any, policy: Any, episodes: int | None = None
              ) -> tuple[dict[str, Any], list]:
    from envgym.evaluation import aggregate
    from envgym.policy import SamplingParams
    from envgym.rollout import collect

    from envgym.agents.structure import env_kwargs

    env = cfg.envs[0]
    lo, _ = env.eval_seeds
    held_out = env.model_copy(update={"kwargs": {**env.kwargs, **env.eval_kwargs}})
    kwargs = env_kwargs(held_out, cfg)  # + rollout.max_turns, as in training
    sampling = SamplingParams(max_tokens=cfg.rollout.max_tokens,
                              temperature=cfg.rollout.eval_temperature, seed=cfg.seed + 7919)
    trajs = collect(env.id, policy, episodes=episodes or claim.eval_episodes, seed=lo, env_kwargs=kwargs,
                    sampling=sampling)
    return aggregate(env.id, "claim", trajs), trajs


SMOKE = {"steps": 1, "rollout": {"tasks_per_step": 2, "eval_episodes": 4},
         "sft": {"episodes": 8, "epochs": 1}}
"""`--smoke`: every part of the pipeline, shrunk until it says nothing (the runner's test)."""


def run_arm(claim: Claim, arm: Arm, seed: int, steps: int | None, out: Path,
            smoke: bool = False) -> dict[str, Any]:
    """Train one arm from the seed's warm start, evaluate it, return its record."""
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train

    base = merge(claim.base(seed), SMOKE) if smoke else claim.base(seed)
    if steps is not None:
        base["steps"] = steps
    started = provenance() if claim.v3 else {}  # the commit this process loaded
    warm = _warm_start(base, out / f"seed{seed}")
    run_dir = out / f"seed{seed}" / arm.name
    cfg = load_config(merge(merge(base, arm.overrides), {
        "output_dir": str(run_dir), "model": {"policy": warm, "warm_start": "none"}}))
    start = time.perf_counter()
    result = train(cfg, eval_at_start=False)
    report, trajs = _evaluate(claim, cfg, result["policy"], 4 if smoke else None)
    record = {"claim": claim.name, "arm": arm.name, "seed": seed, "steps": cfg.steps,
              "seconds": round(time.perf_counter() - start, 1),
              "mean_reward": report["mean_reward"], "success_rate": report["success_rate"],
              "episodes": report["episodes"], "failures": report.get("failures", {}),
              **{f"metrics.{k}": v for k, v in (report.get("metrics") or {}).items()
                 if isinstance(v, (int, float))}}
    if claim.extra is not None:
        record.update(claim.extra(run_dir, trajs))
    if claim.v3:
        record.update(_v3_fields(claim, cfg, warm, out / f"seed{seed}", smoke))
        record.update(started)
    return record


def _v3_fields(claim: Claim, cfg: Any, warm: str, seed_dir: Path, smoke: bool) -> dict[str, Any]:
    """Provenance, the fully resolved config (every env kwarg pinned), and the warm start's
    own held-out evaluation (evaluated once per seed, on the same episodes as the arms)."""
    from envgym.agents.structure import env_kwargs

    env = cfg.envs[0]
    held_out = env.model_copy(update={"kwargs": {**env.kwargs, **env.eval_kwargs}})
    path = seed_dir / "warm_eval.json"
    if path.is_file():
        warm_eval = json.loads(path.read_text())
    else:
        from envgym.agents.policies.hf import HFPolicy

        policy = HFPolicy(warm, device="cpu", seed=cfg.seed)
        report, trajs = _evaluate(claim, cfg, policy, 4 if smoke else None)
        warm_eval = {"mean_reward": report["mean_reward"], "success_rate": report["success_rate"],
                     "episodes": report["episodes"],
                     **{f"metrics.{k}": v for k, v in (report.get("metrics") or {}).items()
                        if isinstance(v, (int, float))}}
        if claim.extra is not None:
            warm_eval.update({k: v for k, v in claim.extra(None, trajs).items()
                              if isinstance(v, (int, float))})
        _write(path, warm_eval)
    return {**provenance(), "episodes_per_step": episodes_per_step(cfg),
            "config": cfg.model_dump(mode="json"),
            "env_kwargs_train": _pinned(env.id, env_kwargs(env, cfg)),
            "env_kwargs_eval": _pinned(env.id, env_kwargs(held_out, cfg)),
            **{f"warm.{k}": v for k, v in warm_eval.items()}}


def _pinned(env_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Every constructor argument of the environment with the value it ran with: the given
    ones, and each default read from the signature (a default that moves later cannot move
    a published number unnoticed)."""
    import inspect

    from envgym.registration import spec
    from envgym.registration import load_entry_point

    cls = load_entry_point(spec(env_id).entry_point)
    out: dict[str, Any] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for name, p in inspect.signature(init).parameters.items():
            if p.kind is p.KEYWORD_ONLY and name not in out and p.default is not p.empty:
                out[name] = p.default
    out.update(kwargs)
    return json.loads(json.dumps(out, default=str))


def summarise(claim: Claim, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Each arm's mean with a 95% interval over seeds, and the paired difference."""
    by = {(r["arm"], r["seed"]): r for r in records}
    seeds = sorted({r["seed"] for r in records})
    keys = [claim.metric, *claim.guards, *claim.secondary, "mean_reward", "success_rate"]
    keys = list(dict.fromkeys(k for k in keys if all(k in r for r in records)))
    out: dict[str, Any] = {"claim": claim.name, "seeds": seeds, "metric": claim.metric}
    for key in keys:
        arms = {a.name: t_interval([by[(a.name, s)][key] for s in seeds if (a.name, s) in by])
                for a in (claim.method, claim.baseline)}
        paired = [by[(claim.method.name, s)][key] - by[(claim.baseline.name, s)][key]
                  for s in seeds if (claim.method.name, s) in by and (claim.baseline.name, s) in by]
        out[key] = {"arms": arms, "paired_difference": t_interval(paired)}
    d = out[claim.metric]["paired_difference"]
    sign = -1 if claim.lower_is_better else 1
    # The interval in the paper's direction: flipping the sign swaps its ends (the first
    # version read `lo` for both directions and called a lower-is-better 0 [-0.23, +0.23]
    # "reproduced").
    lo, hi = sorted((sign * d["lo"], sign * d["hi"]))
    if d["n"] < 2 or math.isnan(d["lo"]):
        verdict = "inconclusive (fewer than two paired seeds)"
    elif lo > 0:
        verdict = "reproduced"
    elif hi < 0:
        verdict = "reversed"
    else:
        verdict = "inconclusive (the paired interval contains 0)"
    broken = [g for g, limit in claim.guards.items()
              if out[g]["paired_difference"]["n"] >= 2
              and out[g]["paired_difference"]["hi"] < -limit]
    if broken and verdict == "reproduced":
        verdict = f"not reproduced (guard broken: {', '.join(broken)})"
    tokens = out.get("sampled_tokens_per_step", {}).get("arms", {})
    if len(tokens) == 2:
        a, b = (tokens[arm.name]["mean"] for arm in (claim.method, claim.baseline))
        out["sampled_tokens_ratio"] = a / b if b else math.nan
        if not 0.75 <= out["sampled_tokens_ratio"] <= 1.25:
            verdict = f"inconclusive (sampled tokens per step differ: ratio " \
                      f"{out['sampled_tokens_ratio']:.2f})"
    out["verdict"] = verdict
    if claim.v3:
        out["registered_mde"] = dict(claim.mde)
        sd = [by[(claim.method.name, s)][claim.metric] - by[(claim.baseline.name, s)][claim.metric]
              for s in seeds if (claim.method.name, s) in by and (claim.baseline.name, s) in by]
        if len(sd) >= 2:
            m = sum(sd) / len(sd)
            spread = math.sqrt(sum((x - m) ** 2 for x in sd) / (len(sd) - 1))
            out["observed_mde"] = mde(spread, len(sd))  # post hoc, from this run's spread
        warm_key = f"warm.{claim.metric}"
        warm = [by[(claim.baseline.name, s)][warm_key] for s in seeds
                if (claim.baseline.name, s) in by and warm_key in by[(claim.baseline.name, s)]]
        if warm:
            out["warm_start"] = t_interval(warm)
        commits = sorted({r.get("commit", "unknown") for r in records})
        out["commits"] = commits
    return out


RECORDS = Path(__file__).resolve().parent / "records"


def _run_seed(claim: Claim, seed: int, steps: int | None, out: Path, smoke: bool,
              jobs: int) -> list[dict[str, Any]]:
    """Both arms of one seed: in turn, or side by side in two processes (`jobs=2`, one torch
    thread each) after the shared warm start is made."""
    arms = (claim.method, claim.baseline)
    if jobs < 2:
        return [run_arm(claim, arm, seed, steps, out, smoke) for arm in arms]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    base = merge(claim.base(seed), SMOKE) if smoke else claim.base(seed)
    if steps is not None:
        base["steps"] = steps
    _warm_start(base, out / f"seed{seed}")
    if claim.v3:  # the warm start's evaluation once, before the arms race for its file
        cfg = resolved(claim, claim.baseline, seed, str(out / f"seed{seed}" / "sft"),
                       out / f"seed{seed}" / claim.baseline.name, steps, smoke)
        _v3_fields(claim, cfg, str(out / f"seed{seed}" / "sft"), out / f"seed{seed}", smoke)
    module = claim_module(claim)
    with ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(_arm_job, module, arm.name, seed, steps, str(out), smoke)
                   for arm in arms]
        return [f.result() for f in futures]


def claim_module(claim: Claim) -> str:
    return claim.name


def _arm_job(module: str, arm_name: str, seed: int, steps: int | None, out: str,
             smoke: bool) -> dict[str, Any]:
    import importlib
    import sys

    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    claim = importlib.import_module(module).CLAIM
    arm = next(a for a in (claim.method, claim.baseline) if a.name == arm_name)
    return run_arm(claim, arm, seed, steps, Path(out), smoke)


def run_claim(claim: Claim, seeds: tuple[int, ...], steps: int | None, out: Path,
              log: Callable[[str], None] = print, smoke: bool = False,
              jobs: int = 1) -> dict[str, Any]:
    """Both arms for every seed, one JSON file per (arm, seed), then `summary.json`."""
    out.mkdir(parents=True, exist_ok=True)
    if claim.v3:
        provenance()  # pinned before any model code is imported
        check_fair(claim, seeds[0], steps, smoke)
    (out / "claim.json").write_text(json.dumps(describe(claim), indent=2))
    records = []
    for seed in seeds:
        for record in _run_seed(claim, seed, steps, out, smoke, jobs):
            _write(out / f"{record['arm']}_seed{seed}.json", record)
            if claim.v3 and not smoke:
                _write(RECORDS / claim.name / f"{record['arm']}_seed{seed}.json", record)
            log(json.dumps({k: v for k, v in record.items() if k != "config"}, default=float))
            records.append(record)
    summary = summarise(claim, records)
    _write(out / "summary.json", summary)
    return summary


def summarise_dir(claim: Claim, out: Path) -> dict[str, Any]:
    """`summary.json` again from the per-(arm, seed) records a finished run wrote."""
    arms = (claim.method.name, claim.baseline.name)
    records = [json.loads(p.read_text()) for p in sorted(out.glob("*_seed*.json"))]
    records = [r for r in records if r.get("arm") in arms]
    if not records:
        raise SystemExit(f"no records of claim {claim.name!r} in {out}")
    summary = summarise(claim, records)
    _write(out / "summary.json", summary)
    return summary


def describe(claim: Claim) -> dict[str, Any]:
    return {"claim": claim.name, "paper": claim.paper, "hypothesis": claim.hypothesis,
            "metric": claim.metric, "lower_is_better": claim.lower_is_better,
            "method": claim.method.__dict__, "baseline": claim.baseline.__dict__,
            "seeds": list(claim.seeds), "budget_minutes": claim.budget_minutes,
            "eval_episodes": claim.eval_episodes, "guards": claim.guards, "notes": claim.notes,
            "v3": claim.v3, "mde": claim.mde}


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=float))
    tmp.replace(path)


def _step_files(run_dir: Path) -> list[list[Any]]:
    """Every training step's trajectories, as the trainer wrote them (`[log] trajectories`)."""
    from envgym.trajectory import read_trajectories

    return [list(read_trajectories(p))
            for p in sorted((run_dir / "trajectories").glob("step_*.jsonl"))]


def sampled_tokens(run_dir: Path, _held_out: list) -> dict[str, float]:
    """Mean sampled action tokens per training step, each sampled turn counted once.

    An ARTIST fork carries a copy of its controller's turns before `fork_turn`: that prefix
    was sampled once, so it counts once per `controller_id`; each fork's turns from
    `fork_turn` on are its own samples. Every other trajectory counts whole, trained or not:
    a first-segment retry the credit leaves untrained was still sampled (the first version
    counted only trained turns and so missed those retries; fixed after the `artist` run's
    ratio of 0.5 exposed it, see docs/claims.md)."""
    totals = []
    for trajs in _step_files(run_dir):
        total, prefixes = 0, set()
        for t in trajs:
            fork = t.meta.get("fork_turn")
            start = 0 if fork is None else int(fork)
            if fork is not None and t.meta.get("controller_id") not in prefixes:
                prefixes.add(t.meta.get("controller_id"))
                start = 0
            total += sum(len(turn.action_token_ids) for turn in t.turns[start:])
        totals.append(total)
    return {"sampled_tokens_per_step": sum(totals) / len(totals) if totals else math.nan}


def _step_groups(run_dir: Path) -> list[list[Any]]:
    """Every training step's groups (members sharing a `group_id`), as the trainer logged them."""
    out = []
    for trajs in _step_files(run_dir):
        by: dict[str, list[Any]] = {}
        for t in trajs:
            by.setdefault(str(t.group_id), []).append(t)
        out += by.values()
    return out


def _has_signal(members: list[Any]) -> bool:
    """Some token of some member got a non-zero advantage from the credit."""
    return any(a != 0.0 for t in members for row in
               ((t.meta.get("credit") or {}).get("advantages") or []) for a in row)


def all_fail_signal(run_dir: Path, _held_out: list) -> dict[str, float]:
    """The share of all-fail groups (no member succeeded) in which some token still got a
    non-zero advantage: the learning signal GRPO cannot give and IG claims to."""
    groups = wrong = 0
    for members in _step_groups(run_dir):
        if any(t.success for t in members):
            continue
        groups += 1
        wrong += _has_signal(members)
    return {"all_fail_groups": float(groups),
            "all_fail_with_signal": wrong / groups if groups else math.nan}


def tied_group_signal(run_dir: Path, _held_out: list) -> dict[str, float]:
    """The share of tied groups (every member the same return) in which some token still got
    a non-zero advantage. GRPO's group-normalised advantage is exactly 0 there, so any signal
    is the step-level estimator's own. `all_fail_signal` alone cannot show that where the
    environment pays format penalties: a failing group then still varies in return (added
    after the first `ig_search` run, whose GRPO arm had signal in 0.86-0.98 of all-fail groups)."""
    groups = signal = 0
    for members in _step_groups(run_dir):
        returns = [sum(turn.reward for turn in t.turns) for t in members]
        if len(members) < 2 or max(returns) - min(returns) > 1e-9:
            continue
        groups += 1
        signal += _has_signal(members)
    return {"tied_groups": float(groups),
            "tied_with_signal": signal / groups if groups else math.nan}


def ig_measures(run_dir: Path, held_out: list) -> dict[str, float]:
    return {**all_fail_signal(run_dir, held_out), **tied_group_signal(run_dir, held_out)}


def benign_lookup_rate(_run_dir: Path, held_out: list) -> dict[str, float]:
    """Needless lookups: the share of benign held-out prompts (to be answered: kinds `benign`
    and `sensitive`, the environment's own over-refusal set) on which the policy consulted
    the rulebook. IFPO's claim is that this falls while the safety rate holds."""
    benign = [t.outcome for t in held_out if t.error is None and t.outcome
              and t.outcome.get("expected") == "comply"
              and t.outcome.get("kind") in ("benign", "sensitive")]
    rate = sum(bool(o.get("consulted")) for o in benign) / len(benign) if benign else math.nan
    return {"benign_lookup_rate": rate, "benign_prompts": float(len(benign))}


def form_metrics(run_dir: Path | None, held_out: list) -> dict[str, float]:
    """Metrics a tiny model can move where answer content is at chance (claims v3):
    `finish_rate`, the share of held-out episodes that end with a well-formed answer (not
    truncated, not a malformed answer or a give-up); `first_turn_valid`, the share whose first
    turn parsed. With a run directory, also the sampled tokens per training step."""
    done = [t for t in held_out if t.error is None]
    out: dict[str, float] = {"held_out_episodes": float(len(done))}
    if done:
        out["finish_rate"] = sum(_finished(t) for t in done) / len(done)
        out["first_turn_valid"] = sum(bool(t.turns) and not t.turns[0].info.get("parse_error")
                                      for t in done) / len(done)
    if run_dir is not None:
        out.update(sampled_tokens(run_dir, held_out))
    return out


def _finished(traj: Any) -> bool:
    o = traj.outcome or {}
    if not traj.terminated or o.get("malformed") or o.get("gave_up"):
        return False
    return o.get("answer") is not None or bool(o.get("answered")) or "decision" in o


def form_and_lookups(run_dir: Path | None, held_out: list) -> dict[str, float]:
    return {**form_metrics(run_dir, held_out), **benign_lookup_rate(run_dir, held_out)}


def form_and_ig(run_dir: Path | None, held_out: list) -> dict[str, float]:
    out = form_metrics(run_dir, held_out)
    if run_dir is not None:
        out.update(tied_group_signal(run_dir, held_out))
    return out

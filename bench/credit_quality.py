"""Does each credit estimator credit the turn that deserves it? Mechanism measures on real batches.

Every number here comes from trajectories the project's rollout engine sampled from the tiny
model after a short SFT warm start (as `envgym demo` and the claims runner make them), from
`--warm-starts` (default 3) warm starts per environment; every estimator of a measure reads
the *same* batch, so estimators differ only in how they assign credit. Nothing is trained
after the warm start except in the IFPO premise, which is about drift and so must take steps.
With fixed seeds every measure is deterministic. One JSON line per (estimator, environment,
measure) goes to stdout and to `--out` (written atomically).

Measures (issue 37 item 1):

* `decisive_contrast` (TimeSeries-v0, ARTIST rules): the mean first-turn advantage on valid
  first zooms minus the mean on junk first turns (parse errors), for `grpo`, `turn` (gamma
  1, gamma 0.5, `mt_grpo`) and `gigpo`, under the current rewards and, on the same
  trajectories' texts re-scored, under the rewards before issue 37 (`junk_margin`,
  `informative_only` and `override_replaces` off). Also: informative (new evidence) against
  uninformative valid first zooms.
* `ig_auc` (Search-v0, protocol "ig"): the AUC of the IG value of a search step for telling
  answer-bearing result blocks (a gold answer in the returned passages) from the others,
  with the number of blocks of each kind.
* `controller_vs_coverage` (TimeSeries-v0 via `collect_hierarchical`): the Spearman
  correlation between ARTIST's controller advantage A_c and the controller rollout's
  evidence coverage, and the mean A_c with and without any evidence inspected.
* `ifpo_premise` (SafetyRules-v0 from a consult-heavy warm start): the share of benign
  prompts answered with a lookup at the warm start and after `--ifpo-steps` GRPO steps and
  GRPO+IFPO steps from it, plus the first-order drift on the warm start's batch: the summed
  advantage of consulting rollouts on benign prompts per rollout (> 0 pushes towards
  consulting).
* `slate_variance` (Search-v0, rule judge): the variance of step advantages under SLATE's
  tree against the independent-trajectory control (`turn`, gamma 0, std off), with the
  control's caveat corrected: a step index that only one trajectory of a question reached
  gets advantage 0 (its own mean), which deflates the control's variance; `control_reached2`
  drops those estimates.

    python bench/credit_quality.py [--warm-starts 3] [--only decisive ig artist ifpo slate]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import numpy as np

TS = "envgym/TimeSeries-v0"
SEARCH = "envgym/Search-v0"
SAFETY = "envgym/SafetyRules-v0"
# every kwarg pinned: a default that moves later does not move these measures
TS_KW = {"series_length": 512, "sketch_points": 8, "zoom_points": 16, "max_rounds": 3,
         "tool_format": "tag", "format_rules": "artist", "point_cost": 1e-4,
         "exploration_bonus": 1.0, "first_seg_trials": 5, "require_first_zoom": True,
         "max_turns": 8}  # artist_v3's setting, so its warm starts can be shared (--ts-warm)
SEARCH_IG_KW = {"protocol": "ig", "max_turns": 4}
SEARCH_SLATE_KW = {"judge": "rule"}
SAFETY_KW = {"split": "train", "max_turns": 4}
WARM = {  # (scripted mix, episodes, epochs, max_tokens): the claims' warm starts, shortened
    TS: ({"oracle": 0.6, "random": 0.4}, 128, 10, 40),  # artist_v3's warm start
    SEARCH: ({"oracle": 0.5, "heuristic": 0.3, "random": 0.2}, 96, 6, 48),
    SAFETY: ({"oracle": 0.2, "always_lookup": 0.6, "never_lookup": 0.2}, 96, 6, 64),
}
ENV_KW = {TS: TS_KW, SEARCH: SEARCH_IG_KW, SAFETY: SAFETY_KW}
ESTIMATORS = {
    "grpo": (["grpo"], {}),
    "turn_g1": (["turn"], {"turn": {"gamma": 1.0}}),
    "turn_g0.5": (["turn"], {"turn": {"gamma": 0.5}}),
    "mt_grpo": (["turn"], {"turn": {"mode": "mt_grpo"}}),
    "gigpo": (["gigpo"], {}),
}
BEFORE_ISSUE_37 = ("junk_margin", "informative_only", "override_replaces")


def warm_start(env_id: str, ws: int, cache: Path) -> Any:
    """The tiny model (96 hidden, 2 layers) after SFT on noisy scripted demonstrations; `ws`
    seeds the initialisation, the demonstrations and the shuffle. Kept under `cache` (keyed
    by the settings), so a rerun measures the same warm starts without retraining them."""
    import torch

    from envgym.agents.policies.hf import HFPolicy
    from envgym.agents.sft import noisy_demonstrations, sft, tokenize_trajectories
    from envgym.agents.tiny import build_tiny_model

    mix, episodes, epochs, _ = WARM[env_id]
    key = f"{env_id.split('/')[1]}-ws{ws}-e{episodes}x{epochs}"
    done = cache / key / "sft"
    if (done / "config.json").is_file():
        return HFPolicy(str(done), device="cpu", seed=ws)
    torch.manual_seed(ws)
    path = build_tiny_model(cache / key / "init", seed=ws, hidden_size=96, layers=2)
    policy = HFPolicy(str(path), device="cpu", seed=ws)
    kwargs = ENV_KW[env_id]
    demos = noisy_demonstrations(env_id, mix, episodes, (0, 100_000), env_kwargs=kwargs, seed=ws)
    sft(policy.model, tokenize_trajectories(demos, policy.chat), epochs=epochs, batch_size=16,
        lr=5e-3, seed=ws, pad_id=policy.pad_id)
    policy.model.eval()
    tmp = cache / key / "sft.tmp"
    policy.model.save_pretrained(tmp)
    policy.tokenizer.save_pretrained(tmp)
    tmp.replace(done)  # atomic: a half-written warm start is never reused
    return policy


def sampling(env_id: str, seed: int) -> Any:
    from envgym.policy import SamplingParams

    return SamplingParams(max_tokens=WARM[env_id][3], temperature=1.0, seed=seed)


def advantages_per_turn(trajs: list, chain: list[str], options: dict, tokenizer=None) -> list:
    """[(trajectory index, turn index, advantage, trained)] for every turn with tokens."""
    from envgym.agents.credit import compute_credit

    batch = compute_credit(trajs, chain, options, tokenizer=tokenizer)
    return [[float(a[0]) if a.size else 0.0 for a in row] for row in batch.advantages], \
        batch.turn_mask, batch


@contextmanager
def rules_off(names: tuple[str, ...]) -> Iterator[None]:
    """TimeSeries' reward with some rules switched off (the rewards before a change)."""
    from envgym.environments.timeseries.rules import RULES
    from envgym.rules import Mutant

    with ExitStack() as stack:
        for name in names:
            stack.enter_context(RULES.mutated(Mutant(RULES.name, name, "off")))
        yield


def _row(estimator: str, env: str, measure: str, **values: Any) -> dict[str, Any]:
    return {"bench": "credit_quality", "estimator": estimator, "env": env, "measure": measure,
            **values}


# ---- decisive-turn contrast ------------------------------------------------------------------

def _first_kind(traj) -> str:
    first = traj.turns[0]
    if first.info.get("parse_error"):
        return "junk"
    if "new_evidence" in first.info:
        return "informative" if first.info["new_evidence"] > 0 else "uninformative"
    return "other"


def decisive(policies: list, tasks: int, group: int) -> list[dict[str, Any]]:
    from envgym.rollout import collect

    batches = {"current": [], "before_issue_37": []}
    for ws, policy in enumerate(policies):
        for label, off in (("current", ()), ("before_issue_37", BEFORE_ISSUE_37)):
            with rules_off(off):  # same seeds: the same texts, scored under either reward
                trajs = collect(TS, policy, episodes=tasks, group_size=group, seed=10_000 * ws,
                                env_kwargs=TS_KW, sampling=sampling(TS, 1000 + ws))
            batches[label].append([t for t in trajs if t.error is None and t.turns])
    rows = []
    for label, per_ws in batches.items():
        for name, (chain, opts) in ESTIMATORS.items():
            by_kind: dict[str, list[float]] = {}
            per_ws_contrast = []
            for trajs in per_ws:
                adv, _, _ = advantages_per_turn(trajs, chain, opts)
                kinds = [_first_kind(t) for t in trajs]
                for k, a in zip(kinds, adv):
                    by_kind.setdefault(k, []).append(a[0])
                valid = [a[0] for k, a in zip(kinds, adv) if k in ("informative", "uninformative")]
                junk = [a[0] for k, a in zip(kinds, adv) if k == "junk"]
                if valid and junk:
                    per_ws_contrast.append(float(np.mean(valid) - np.mean(junk)))
            valid = by_kind.get("informative", []) + by_kind.get("uninformative", [])
            junk = by_kind.get("junk", [])
            rows.append(_row(name, TS, "decisive_contrast", rewards=label,
                             mean_adv_valid_first=_mean(valid), mean_adv_junk_first=_mean(junk),
                             contrast_valid_minus_junk=_diff(valid, junk),
                             contrast_se=_se_diff(valid, junk),
                             contrast_per_warm_start=per_ws_contrast,
                             informative_minus_uninformative=_diff(
                                 by_kind.get("informative", []), by_kind.get("uninformative", [])),
                             n_valid=len(valid), n_junk=len(junk),
                             n_informative=len(by_kind.get("informative", [])),
                             episodes=sum(len(b) for b in per_ws), warm_starts=len(per_ws)))
    return rows


def _mean(x: list[float]) -> float | None:
    return float(np.mean(x)) if x else None


def _diff(a: list[float], b: list[float]) -> float | None:
    return float(np.mean(a) - np.mean(b)) if a and b else None


def _se_diff(a: list[float], b: list[float]) -> float | None:
    if len(a) < 2 or len(b) < 2:
        return None
    return float(np.sqrt(np.var(a, ddof=1) / len(a) + np.var(b, ddof=1) / len(b)))


# ---- IG AUC ----------------------------------------------------------------------------------

def _answer_bearing(turn, golds: list[str]) -> bool:
    from envgym.environments.search import scoring

    text = " ".join(str(m.get("content", "")) for m in turn.observation)
    return bool(golds) and bool(scoring.subem(text, golds))


def auc(pos: list[float], neg: list[float]) -> float | None:
    """P(a positive outranks a negative), ties half (Mann-Whitney)."""
    if not pos or not neg:
        return None
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float(((p > n).sum() + 0.5 * (p == n).sum()) / (p.size * n.size))


def ig_auc(policies: list, tasks: int, group: int) -> list[dict[str, Any]]:
    from envgym.agents.sft import tokenize_trajectories
    from envgym.agents.trainer import attach_ig
    from envgym.rollout import collect

    pos, neg, per_ws = [], [], []
    for ws, policy in enumerate(policies):
        trajs = collect(SEARCH, policy, episodes=tasks, group_size=group, seed=20_000 * ws,
                        env_kwargs=SEARCH_IG_KW, sampling=sampling(SEARCH, 2000 + ws))
        trajs = tokenize_trajectories([t for t in trajs if t.error is None], policy.chat)
        attach_ig(trajs, policy)
        p_ws, n_ws = [], []
        for t in trajs:
            golds = list(t.outcome.get("golden_answers") or [])
            for turn in t.turns:
                for span in turn.spans:
                    if span.kind == "query" and span.value is not None:
                        (p_ws if _answer_bearing(turn, golds) else n_ws).append(float(span.value))
        pos += p_ws
        neg += n_ws
        per_ws.append(auc(p_ws, n_ws))
    return [_row("ig", SEARCH, "ig_auc", auc=auc(pos, neg), answer_bearing_blocks=len(pos),
                 other_blocks=len(neg), auc_per_warm_start=per_ws,
                 mean_ig_answer_bearing=_mean(pos), mean_ig_other=_mean(neg),
                 warm_starts=len(policies))]


# ---- ARTIST controller advantage vs coverage ---------------------------------------------------

def artist(policies: list, questions: int) -> list[dict[str, Any]]:
    from scipy import stats

    from envgym.hierarchy import collect_hierarchical
    from envgym.runstate import RunState

    a_c, cover, per_ws = [], [], []
    for ws, policy in enumerate(policies):
        trajs = collect_hierarchical(TS, policy, episodes=questions, controllers=2, samples=4,
                                     seed=30_000 * ws, env_kwargs=TS_KW, run=RunState(),
                                     sampling=sampling(TS, 3000 + ws),
                                     controller_temperature=1.0, reasoner_temperature=0.7)
        trajs = [t for t in trajs if t.error is None]
        adv, mask, batch = advantages_per_turn(trajs, ["hierarchical"], {})
        x, y = [], []
        for t, row, on in zip(batch.trajectories, adv, mask):
            if t.meta.get("sample") != 0:
                continue
            ctrl = [a for turn, a, m in zip(t.turns, row, on) if m and turn.role == "controller"]
            if ctrl:
                x.append(ctrl[0])
                y.append(float(t.outcome.get("coverage", 0.0)))
        a_c += x
        cover += y
        per_ws.append(_spearman(x, y))
    seen = [a for a, c in zip(a_c, cover) if c > 0]
    unseen = [a for a, c in zip(a_c, cover) if c == 0]
    return [_row("hierarchical", TS, "controller_vs_coverage",
                 spearman=_spearman(a_c, cover), spearman_per_warm_start=per_ws,
                 mean_a_c_some_evidence=_mean(seen), mean_a_c_no_evidence=_mean(unseen),
                 controller_rollouts=len(a_c), with_evidence=len(seen),
                 warm_starts=len(policies))]


def _spearman(x: list[float], y: list[float]) -> float | None:
    from scipy import stats

    if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(stats.spearmanr(x, y).statistic)


# ---- IFPO premise ------------------------------------------------------------------------------

def _benign_lookup(trajs: list) -> tuple[float | None, int]:
    benign = [t.outcome for t in trajs if t.error is None and t.outcome
              and t.outcome.get("expected") == "comply"
              and t.outcome.get("kind") in ("benign", "sensitive")]
    if not benign:
        return None, 0
    return float(np.mean([bool(o.get("consulted")) for o in benign])), len(benign)


def _drift(trajs: list, chain: list[str]) -> float | None:
    """Summed advantage of consulting rollouts on benign prompts, per benign rollout: the sign
    of the first-order change of P(consult) that one policy-gradient step makes."""
    adv, mask, batch = advantages_per_turn(trajs, chain, {})
    total, n = 0.0, 0
    for t, row, on in zip(batch.trajectories, adv, mask):
        if t.outcome.get("expected") != "comply" or t.outcome.get("kind") not in ("benign", "sensitive"):
            continue
        n += 1
        if t.outcome.get("consulted"):
            total += float(np.mean([a for a, m in zip(row, on) if m] or [0.0]))
    return total / n if n else None


def ifpo_premise(policies: list, tasks: int, group: int, steps: int, tmp: Path
                 ) -> list[dict[str, Any]]:
    from envgym.rollout import collect

    rows = []
    eval_eps = 64
    for ws, policy in enumerate(policies):
        batch = collect(SAFETY, policy, episodes=tasks, group_size=group, seed=40_000 * ws,
                        env_kwargs=SAFETY_KW, sampling=sampling(SAFETY, 4000 + ws))
        batch = [t for t in batch if t.error is None]
        warm_rate, warm_n = _benign_lookup(_eval_safety(policy, eval_eps, ws))
        for name, chain in (("grpo", ["grpo"]), ("grpo_ifpo", ["grpo", "ifpo"])):
            trained = _train_safety(policy, chain, steps, ws, tmp / f"ifpo-{ws}-{name}")
            rate, n = _benign_lookup(_eval_safety(trained, eval_eps, ws))
            rows.append(_row(name, SAFETY, "ifpo_premise", warm_start=ws,
                             benign_lookup_warm=warm_rate, benign_lookup_after=rate,
                             change=None if rate is None or warm_rate is None else rate - warm_rate,
                             benign_prompts=n, steps=steps,
                             first_order_drift=_drift(batch, chain),
                             batch_benign_lookup=_benign_lookup(batch)[0]))
    return rows


def _eval_safety(policy, episodes: int, ws: int) -> list:
    from envgym.rollout import collect

    return collect(SAFETY, policy, episodes=episodes, seed=1_000_000 + 500 * ws,
                   env_kwargs={**SAFETY_KW, "split": "test"}, sampling=sampling(SAFETY, 5000 + ws))


def _train_safety(policy, chain: list[str], steps: int, ws: int, out: Path):
    """`steps` steps of the trainer from the warm start (a copy: the warm start is shared)."""
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train

    warm = out / "warm"
    policy.model.save_pretrained(warm)
    policy.tokenizer.save_pretrained(warm)
    cfg = load_config({
        "seed": ws, "steps": steps, "checkpoint_every": 0, "eval_every": 0,
        "output_dir": str(out / "run"), "credit": chain,
        "model": {"policy": str(warm), "warm_start": "none"},
        "envs": [{"id": SAFETY, "kwargs": dict(SAFETY_KW), "eval_kwargs": {"split": "test"},
                  "train_seeds": [0, 1_000_000], "eval_seeds": [1_000_000, 1_000_010]}],
        "rollout": {"group_size": 8, "tasks_per_step": 6, "max_turns": 4, "max_tokens": 64,
                    "eval_temperature": 1.0, "eval_episodes": 8},
        "ppo": {"minibatches": 2, "kl_coef": 0.01, "kl_estimator": "k3"},
        "optim": {"lr": 2e-4},
        "log": {"tensorboard": False, "progress": False},
    })
    return train(cfg, eval_at_start=False)["policy"]


# ---- SLATE variance ----------------------------------------------------------------------------

def slate(policies: list, questions: int, k: int, horizon: int) -> list[dict[str, Any]]:
    from envgym.tree import slate_trees

    control = {"mode": "return", "gamma": 0.0, "std_norm": False}
    est: dict[str, list[float]] = {"slate": [], "grpo": [], "control": [], "control_reached2": []}
    for ws, policy in enumerate(policies):
        common = {"first_seed": 5000 + 100 * ws, "n_tasks": questions, "budget": horizon - 1,
                  "eta": 0.7, "env_kwargs": SEARCH_SLATE_KW, "sampling": sampling(SEARCH, 6000 + ws),
                  "seed": ws}
        trees = [t for t in slate_trees(SEARCH, policy, k=k, trees=1, **common) if t.error is None]
        full = [t for t in slate_trees(SEARCH, policy, k=1, trees=k, **common)
                if t.meta.get("final") and t.error is None]
        est["slate"] += _trained(trees, ["slate"], {"slate": {"std_norm": False}})
        est["grpo"] += _trained(full, ["grpo"], {"grpo": {"std_norm": False}})
        est["control"] += _trained(full, ["turn"], {"turn": control})
        est["control_reached2"] += _trained(full, ["turn"], {"turn": control}, reached=2)
    var = {name: float(np.var(v)) if v else None for name, v in est.items()}
    return [_row(name, SEARCH, "slate_variance", T=horizon, k=k, var_step_adv=var[name],
                 estimates=len(est[name]), ratio_to_slate=_ratio(var[name], var["slate"]),
                 warm_starts=len(policies),
                 caveat=("single-reach steps dropped" if name == "control_reached2" else
                         "single-reach steps score 0 (deflates variance)" if name == "control"
                         else ""))
            for name in est]


def _trained(trajs, chain, opts, reached: int = 1) -> list[float]:
    """Trained per-turn advantages; with `reached=2` only turn indices that at least two
    trajectories of the question reached (a lone trajectory is its own baseline: 0)."""
    from envgym.agents.credit import group_indices

    adv, mask, batch = advantages_per_turn(trajs, chain, opts)
    reach: dict[tuple[Any, int], int] = {}
    for key, idx in group_indices(batch.trajectories).items():
        for i in idx:
            for t in range(len(batch.trajectories[i].turns)):
                reach[(key, t)] = reach.get((key, t), 0) + 1
    keys = {i: key for key, idx in group_indices(batch.trajectories).items() for i in idx}
    return [a for i, (row, on) in enumerate(zip(adv, mask)) for t, (a, m) in enumerate(zip(row, on))
            if m and reach[(keys[i], t)] >= reached]


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


# ---- main --------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warm-starts", type=int, default=3)
    ap.add_argument("--only", nargs="+", default=["decisive", "artist", "ig", "slate", "ifpo"])
    ap.add_argument("--tasks", type=int, default=12, help="tasks (groups) per warm start")
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--ifpo-steps", type=int, default=4)
    ap.add_argument("--out", type=Path, default=Path("runs/credit_quality.jsonl"))
    ap.add_argument("--warm-ids", type=int, nargs="+",
                    help="which warm starts to use (default: 0 .. --warm-starts - 1)")
    ap.add_argument("--ts-warm", type=Path, nargs="*", default=[],
                    help="SFT directories of TimeSeries-v0 warm starts made elsewhere with the "
                         "same settings (artist_v3's seed*/sft), used before building more")
    ap.add_argument("--build-only", action="store_true", help="make the warm starts and stop")
    ap.add_argument("--cache", type=Path, default=Path("runs/credit_quality_warm"),
                    help="warm starts are kept here and reused")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    rows: list[dict[str, Any]] = []
    t0, c0 = time.perf_counter(), time.process_time()

    def emit(new: list[dict[str, Any]]) -> None:
        for row in new:
            row.update(wall_s=round(time.perf_counter() - t0, 1),
                       cpu_s=round(time.process_time() - c0, 1))
            print(json.dumps(row, default=float), flush=True)
        rows.extend(new)
        _write_jsonl(args.out, rows)

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        args.cache.mkdir(parents=True, exist_ok=True)
        need = {"decisive": TS, "artist": TS, "ig": SEARCH, "slate": SEARCH, "ifpo": SAFETY}
        warm: dict[str, list] = {}
        ids = args.warm_ids if args.warm_ids is not None else list(range(args.warm_starts))
        for env_id in dict.fromkeys(need[m] for m in args.only):
            from envgym.agents.policies.hf import HFPolicy

            given = [HFPolicy(str(d), device="cpu") for d in args.ts_warm] if env_id == TS else []
            warm[env_id] = given + [warm_start(env_id, ws, args.cache)
                                    for ws in ids[: max(0, len(ids) - len(given))]]
        if args.build_only:
            return rows
        for m in args.only:
            if m == "decisive":
                emit(decisive(warm[TS], args.tasks, args.group))
            elif m == "artist":
                emit(artist(warm[TS], args.tasks))
            elif m == "ig":
                emit(ig_auc(warm[SEARCH], args.tasks, max(2, args.group // 2)))
            elif m == "slate":
                emit(slate(warm[SEARCH], args.tasks, 4, 3))
            elif m == "ifpo":
                emit(ifpo_premise(warm[SAFETY], args.tasks // 2, args.group, args.ifpo_steps, tmp))
    return rows


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r, default=float) + "\n" for r in rows))
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main() and 0)

"""`envgym view`: trajectories and their per-token credit as one self-contained HTML page.

Turn-level credit is easy to get wrong silently (a group of one, an answer turn credited to
the wrong role), and arrays of numbers hide it. The page shows every turn of an episode in
chat form with its action tokens coloured by the advantage the learner used, so a
researcher can see which tokens were pushed up and why a group is all zeros.

Where advantages come from, in order of preference:
1. a training run's per-step trajectory files (`log.trajectories = true`), which store the
   advantages the trainer actually used in `meta["credit"]`;
2. `--credit CHAIN`: the trainer's own `compute_credit` run over the file's groups;
3. none: tokens are shown uncoloured.

The page embeds its data as JSON and renders one episode at a time, so it opens fast with
thousands of episodes; it loads nothing from the network.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envgym.trajectory import Trajectory

__all__ = ["RunData", "build_page", "load_run", "page_data", "write_page"]

ASSETS = Path(__file__).with_name("view_assets")


@dataclass
class RunData:
    """What was read from RUN: the trajectories, and every record that could not be read."""

    trajectories: list[Trajectory]
    source: str
    unreadable: list[dict[str, Any]] = field(default_factory=list)
    tokenizer_path: str | None = None


def load_run(path: str | os.PathLike[str]) -> RunData:
    """Read a trajectory JSONL, or a training run's `trajectories/step_*.jsonl` files.

    Bad lines (a torn last line after a crash, a corrupt record) are kept as `unreadable`
    entries the page shows, never raised: a viewer that crashes on the one file you most
    need to look at is no viewer.
    """
    path = Path(path)
    if not path.exists():
        from envgym.errors import EnvGymError

        raise EnvGymError(f"envgym view: {path} does not exist (give a trajectory JSONL or a "
                          "training run's output directory)")
    files = _run_files(path) if path.is_dir() else [(path, None)]
    data = RunData([], str(path), tokenizer_path=_run_tokenizer(path) if path.is_dir() else None)
    for file, step in files:
        _read_file(file, step, data)
    return data


def _run_files(run_dir: Path) -> list[tuple[Path, int | None]]:
    steps = sorted((run_dir / "trajectories").glob("step_*.jsonl"))
    if not steps:
        from envgym.errors import EnvGymError

        raise EnvGymError(f"envgym view: {run_dir} has no trajectories/step_*.jsonl; train with "
                          "`[log] trajectories = true` to record them")
    return [(f, int(f.stem.split("_")[1])) for f in steps]


def _run_tokenizer(run_dir: Path) -> str | None:
    for cand in (run_dir / "trajectories" / "tokenizer", run_dir / "final"):
        if (cand / "tokenizer_config.json").exists():
            return str(cand)
    return None


def _read_file(file: Path, step: int | None, data: RunData) -> None:
    lines = file.read_text(encoding="utf-8", errors="replace").split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            traj = Trajectory.model_validate_json(line)
        except ValueError as e:
            torn = i == len(lines) - 1  # every complete record ends with a newline
            data.unreadable.append({"file": file.name, "line": i + 1, "torn": torn,
                                    "reason": str(e).splitlines()[0][:200],
                                    "preview": line[:200]})
            continue
        if step is not None:
            traj.meta.setdefault("train_step", step)
        data.trajectories.append(traj)


# ---- advantages -------------------------------------------------------------------------


def stored_credit(traj: Trajectory) -> dict[str, Any] | None:
    """The advantages the trainer used for this trajectory, if it recorded them."""
    credit = traj.meta.get("credit")
    return credit if isinstance(credit, dict) and "advantages" in credit else None


def compute_view_credit(trajs: list[Trajectory], chain: Sequence[str],
                        options: dict[str, dict[str, Any]] | None = None, *,
                        tokenizer: Any = None, seed: int = 0) -> dict[int, dict[str, Any]]:
    """Run the trainer's credit chain over completed episodes; `{index: credit record}`.

    Failed episodes are left out exactly as the trainer leaves them out, and shown as such.
    Trajectories a stage drops (`filter`) get no record, so the page says "no credit".
    """
    from envgym.agents.credit import compute_credit

    done = [i for i, t in enumerate(trajs) if t.error is None]
    batch = compute_credit([trajs[i] for i in done], list(chain), options or {},
                           tokenizer=tokenizer, seed=seed)
    by_id = {id(trajs[i]): i for i in done}
    out: dict[int, dict[str, Any]] = {}
    for traj, adv, mask in zip(batch.trajectories, batch.advantages or [], batch.turn_mask):
        out[by_id[id(traj)]] = credit_record(adv, mask, chain)
    return out


def credit_record(advantages: Sequence[Any], turn_mask: Sequence[bool],
                  chain: Sequence[str]) -> dict[str, Any]:
    """A JSON-able record of one trajectory's per-token advantages (what the trainer stores)."""
    return {"chain": list(chain), "trained": [bool(m) for m in turn_mask],
            "advantages": [[float(a) for a in row] for row in advantages]}


# ---- page data --------------------------------------------------------------------------


def page_data(data: RunData, credit: dict[int, dict[str, Any]] | None = None,
              tokenizer: Any = None) -> dict[str, Any]:
    """Everything the page renders, as plain JSON."""
    credit = credit or {}
    eps = []
    for i, t in enumerate(data.trajectories):
        record = credit.get(i) or stored_credit(t)
        eps.append(_episode(i, t, record, tokenizer))
    scale = _scale([a for e in eps for turn in e["turns"] for a in (turn["adv"] or [])])
    groups = _groups(data.trajectories)
    return {"summary": summarize(data), "episodes": eps, "groups": groups,
            "unreadable": data.unreadable, "scale": scale, "start": _start(eps, groups),
            "credit_source": _credit_source(credit, data.trajectories)}


def _credit_source(credit: dict[int, dict[str, Any]], trajs: list[Trajectory]) -> str:
    """What the summary's `credit` row says: which chain was computed, or where it came from."""
    if credit:
        chain = next(iter(credit.values())).get("chain") or []
        return f"computed here: {','.join(chain)}"
    return "stored by the trainer" if any(stored_credit(t) for t in trajs) else "none"


def _start(eps: list[dict[str, Any]], groups: list[dict[str, Any]]) -> int | None:
    """The episode the page opens on: the first (in the sidebar's order) with any non-zero
    trained advantage, since an all-zero first group says nothing about the credit."""
    order = [i for g in groups for i in g["members"]] or [e["i"] for e in eps]
    for i in order:
        if any(turn["trained"] and any(abs(a) > 1e-12 for a in (turn["adv"] or []))
               for turn in eps[i]["turns"]):
            return i
    return order[0] if order else None


def summarize(data: RunData) -> dict[str, Any]:
    """Run summary over completed episodes only; failures are counted apart, with reasons."""
    from envgym.evaluation import pass_at_k

    trajs = data.trajectories
    done = [t for t in trajs if t.error is None]
    by_task: dict[Any, list[Trajectory]] = defaultdict(list)
    for t in done:
        by_task[(t.task_id, t.seed, t.agent_id)].append(t)
    n = min((len(v) for v in by_task.values()), default=0)
    reasons: dict[str, int] = defaultdict(int)
    for t in trajs:
        if t.error is not None:
            reasons[t.error.splitlines()[0][:120]] += 1
    out = {"source": data.source,
           "envs": sorted({t.env_id for t in trajs}),
           "policies": sorted({t.policy for t in trajs if t.policy}),
           "episodes": len(trajs), "completed": len(done), "failed": len(trajs) - len(done),
           "failure_reasons": dict(reasons), "unreadable_records": len(data.unreadable),
           "mean_reward": _mean([t.total_reward for t in done]),
           "success_rate": _mean([float(t.success) for t in done]),
           "samples_per_task": n}
    for k in sorted({1, n} - {0}):
        out[f"pass@{k}"] = _mean([pass_at_k(len(v), sum(x.success for x in v), k)
                                  for v in by_task.values()])
    return out


def _episode(i: int, t: Trajectory, record: dict[str, Any] | None, tokenizer: Any) -> dict:
    advs = (record or {}).get("advantages") or []
    trained = (record or {}).get("trained") or []
    turns = []
    keyed = any(x.state_key for x in t.turns)
    for j, turn in enumerate(t.turns):
        adv = advs[j] if j < len(advs) else None
        # GiGPO's anchor: the state the action was taken from (`state_key` is the one after)
        anchor = ("__start__" if j == 0 else t.turns[j - 1].state_key) if keyed else None
        turns.append({
            "role": turn.role, "state_key": turn.state_key, "anchor": anchor,
            "obs": [{"role": m.get("role"), "content": str(m.get("content", ""))}
                    for m in turn.observation],
            "obs_tokens": len(turn.obs_token_ids),
            "action": turn.action, "reward": turn.reward,
            "components": turn.reward_components, "finish": turn.finish_reason,
            "spans": [s.model_dump() for s in turn.spans],
            "tokens": _token_texts(turn.action_token_ids, tokenizer),
            "logprobs": [round(x, 4) for x in turn.action_logprobs],
            "adv": adv, "trained": bool(trained[j]) if j < len(trained) else record is not None,
            "parse_error": turn.info.get("parse_error"),
        })
    meta = {k: v for k, v in t.meta.items() if k != "credit"}
    return {"i": i, "env": t.env_id, "task": t.task_id, "seed": t.seed,
            "group": _group_of(t), "agent": t.agent_id, "policy": t.policy,
            "reward": t.total_reward, "success": t.success, "error": t.error,
            "outcome": t.outcome, "final": [{"role": m.get("role"), "content": str(m.get("content", ""))}
                                            for m in t.final_observation],
            "meta": meta, "credit": None if record is None else record.get("chain"),
            "turns": turns}


def _token_texts(ids: list[int], tokenizer: Any) -> list[str] | None:
    if not ids:
        return None
    if tokenizer is None:
        return [f"#{x}" for x in ids]
    return [tokenizer.decode([x]) for x in ids]


def _group_of(t: Trajectory) -> str:
    """The trainer's group: one task's G samples; per agent in multi-agent runs."""
    base = str(t.group_id if t.group_id is not None else t.task_id)
    if t.agent_id is not None:
        base += f" · {t.agent_id}"
    step = t.meta.get("train_step")
    return base if step is None else f"step {step} · {base}"


def _groups(trajs: list[Trajectory]) -> list[dict[str, Any]]:
    """Groups with members sorted by reward (best first), failed members last."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(trajs):
        groups[_group_of(t)].append(i)
    out = []
    for key, members in groups.items():
        members.sort(key=lambda i: (trajs[i].error is not None, -trajs[i].total_reward))
        done = [trajs[i].total_reward for i in members if trajs[i].error is None]
        spread = (max(done) - min(done)) if done else 0.0
        out.append({"key": key, "members": members, "zero_variance": len(done) > 1 and spread == 0})
    return out


def _scale(values: list[float]) -> float:
    """Colour scale: the 98th percentile of |advantage|, so one outlier doesn't wash out all."""
    mags = sorted(abs(v) for v in values if math.isfinite(v))
    top = mags[min(len(mags) - 1, int(0.98 * len(mags)))] if mags else 0.0
    return top if top > 1e-9 else 1.0


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


# ---- HTML -------------------------------------------------------------------------------


def build_page(payload: dict[str, Any], title: str = "envgym view") -> str:
    """One HTML string with the CSS, the JS and the data inlined (no network needed)."""
    css = (ASSETS / "view.css").read_text(encoding="utf-8")
    js = (ASSETS / "view.js").read_text(encoding="utf-8")
    blob = json.dumps(payload, allow_nan=False, default=str)
    # `</` inside a <script> would end it; `<\/` is the same string to JSON.parse.
    blob = blob.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return (ASSETS / "view.html").read_text(encoding="utf-8") \
        .replace("{{TITLE}}", _html_escape(title)).replace("{{CSS}}", css) \
        .replace("{{DATA}}", blob).replace("{{JS}}", js)


def _html_escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_page(path: str | os.PathLike[str], html: str) -> Path:
    """Write atomically: a half-written report is worse than the previous one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_tokenizer(data: RunData, explicit: str | None, model: str | None = None) -> Any:
    """The tokenizer that turns token ids into the text shown per token.

    An explicit `--tokenizer` wins (and must load); then the run's saved tokenizer; then the
    `--config`'s model when it is a local directory; then an `hf:PATH` policy spec recorded
    in the trajectories. Without one, tokens show as `#id`.
    """
    from transformers import AutoTokenizer

    if explicit:
        from envgym.errors import InvalidConfig
        from envgym.hub import check_model_source

        try:
            check_model_source(explicit, what="--tokenizer")
            return AutoTokenizer.from_pretrained(explicit)
        except (OSError, ValueError) as e:
            raise InvalidConfig(f"--tokenizer {explicit}: {str(e).splitlines()[0]}") from None
    cands = [data.tokenizer_path, model]
    cands += [p.split(":", 1)[1] for p in {t.policy or "" for t in data.trajectories}
              if p.startswith(("hf:", "vllm:"))]
    for cand in cands:
        if cand and Path(cand).is_dir():
            return AutoTokenizer.from_pretrained(cand)
    return None


def tokenize_text_actions(trajs: list[Trajectory], tokenizer: Any) -> int:
    """Give text-only turns (scripted or API policies) the token ids of their action, so
    credit can be computed and shown per token; returns how many turns were tokenized."""
    n = 0
    for t in trajs:
        for turn in t.turns:
            if not turn.action_token_ids and turn.action:
                turn.action_token_ids = list(tokenizer.encode(turn.action,
                                                              add_special_tokens=False))
                n += 1
    return n


# ---- command ----------------------------------------------------------------------------


def view_command(
    run: Path,
    credit: str | None = None,
    config: Path | None = None,
    out: Path | None = None,
    tokenizer: str | None = None,
    serve: bool = False,
    port: int = 8765,
) -> Path:
    """Build the page for RUN and write it (and optionally serve it on 127.0.0.1)."""
    from envgym.errors import InvalidConfig

    data = load_run(run)
    chain, options, model = _credit_spec(credit, config)
    tok = load_tokenizer(data, tokenizer, model)
    computed = None
    if chain:
        _tokenize_for_credit(data.trajectories, tok, chain)
        try:
            computed = compute_view_credit(data.trajectories, chain, options, tokenizer=tok)
        except ValueError as e:
            raise InvalidConfig(f"envgym view --credit {','.join(chain)}: {e}") from None
    html = build_page(page_data(data, computed, tok), title=f"envgym view · {Path(run).name}")
    target = out or (Path(run) / "view.html" if Path(run).is_dir() else Path(run).with_suffix(".html"))
    try:
        write_page(target, html)
    except OSError as e:
        raise InvalidConfig(f"envgym view: cannot write {target}: {e.strerror or e}") from None
    if serve:
        _serve(target, port)
    return target


def _tokenize_for_credit(trajs: list[Trajectory], tok: Any, chain: Sequence[str]) -> None:
    """Credit is per token: text-only turns need a tokenizer, or a clear error saying so."""
    text_only = any(not turn.action_token_ids and turn.action for t in trajs for turn in t.turns)
    if not text_only:
        return
    if tok is None:
        from envgym.errors import InvalidConfig

        raise InvalidConfig(f"envgym view --credit {','.join(chain)}: these trajectories have "
                            "text-only turns (no token ids) and no tokenizer was found: give "
                            "--tokenizer DIR_OR_HUB_NAME (the model's tokenizer) to tokenize "
                            "them")
    tokenize_text_actions(trajs, tok)


def _credit_spec(credit: str | None, config: Path | None
                 ) -> tuple[list[str], dict[str, Any], str | None]:
    """The chain, its options and the model: `--credit a,b`, or a training config's
    `credit`/`credit_options` (so the view runs exactly what that run's trainer ran)."""
    chain = [c.strip() for c in credit.split(",") if c.strip()] if credit else []
    options: dict[str, Any] = {}
    model = None
    if config is not None:
        from envgym.agents.config import load_config

        cfg = load_config(config)
        chain = chain or list(cfg.credit)
        options = {k: dict(v) for k, v in cfg.credit_options.items()}
        model = cfg.model.policy if cfg.model.policy != "tiny" else None
    return chain, options, model


def _serve(page: Path, port: int) -> None:
    import functools
    import http.server

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(page.parent))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(f"serving http://127.0.0.1:{httpd.server_address[1]}/{page.name} (Ctrl-C stops)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass

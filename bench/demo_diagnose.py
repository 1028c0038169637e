"""Development diagnosis of `envgym demo` (docs/demo.md, "development, attempt 3").

Why does RL from the base collapse onto one cheap zoom and one letter instead of learning where
to look? Two subcommands, for development seeds only (never the registered 0-49):

    python bench/demo_diagnose.py run OUT SEED [--steps 60] [--eval 192] [--set KEY=JSON ...]
                                  [--kl-trace]
    python bench/demo_diagnose.py stats OUT
    python bench/demo_diagnose.py scripted [--n 300]
    python bench/demo_diagnose.py read MODEL_DIR [MODEL_DIR ...] [--n 300]
    python bench/demo_diagnose.py answer-sft OUT [--n 3000] [--epochs 4] [--from DIR] [--only T]

`run` is `envgym demo` with recipe overrides (`--set ppo.kl_coef=0.05`, `--set
'sft.scripted={"heuristic": 0.5, "random": 0.5}'`: a dotted path into the config, then a JSON
value; `envs.0.kwargs.task_types=["trend"]` walks into the first environment's kwargs) that also writes every training step's rollouts to `OUT/train_rollouts.jsonl` (the trainer
keeps only evaluation trajectories) and the SFT model to `OUT/sft_model` (for `read`).
`--kl-trace` also writes, for every micro-batch of every update, the largest move of one
action token's log-prob away from the KL reference (`max |ref - logp|`) to `OUT/kl_trace.jsonl`:
the step-level `kl` in `rl/metrics.jsonl` is a mean of k3, which one token moved by 9 nats
dominates (docs/demo.md, seeds 30-39: the optimiser's first step without warm-up).
`stats` reads that file and prints, per block of ten steps: the answer mix, evidence coverage,
answered accuracy above chance of covering and of non-covering episodes, how many distinct first
zooms were sampled, the group z-scored return of covering vs non-covering episodes (what the zoom
turn's advantage is under gamma-1 turn credit, up to the zoom's own cost), and how many groups had
one accuracy for all their rollouts yet a non-zero spread of return: there the z-score turns cost
differences of thousandths into unit advantages.
`scripted` scores the scripted policies (oracle, the honest
question-guided heuristic, random) on the demo's environment settings over development task
seeds 2,000,000+: answered accuracy above chance and evidence coverage per task type.
`read` asks whether a model *reads*, with the zooms taken out of its hands: the honest
heuristic plays each development task up to its answer turn (it zooms where the question
points), and the model's forced choice among the option letters (the most likely
`<answer>L</answer>` after the heuristic's own think) is scored against the gold letter,
per task type, as accuracy above chance. A model that reads what it was shown beats chance
on the types the heuristic covers (trend, anomaly); one that does not sits at chance there,
whatever RL later does to its zooms. `answer-sft` asks whether the base *can* learn to read
here: it fine-tunes the shipped base on the heuristic's answer letters alone (training tasks
0 to n-1, loss on the letter token only, AdamW lr 1e-3, batch 16, one thread), then `read`s
it on training and development tasks.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

ZOOM_RE = re.compile(r"<zoom>\s*\[?\s*(\d+)\s*,\s*(\d+)")
DEV_TASKS = 2_000_000  # first development task seed: apart from training and held-out tasks
ANSWER_HEAD = "<think>Answer from what I read.</think><answer>"  # the heuristic's answer turn


def run(out: Path, seed: int, steps: int, eval_episodes: int, overrides: dict[str, Any],
        kl_trace: bool = False) -> None:
    """The demo with `overrides` ("section.key" -> value) applied to its config, every
    training step's rollouts appended to `out/train_rollouts.jsonl`."""
    import envgym.agents.demo as demo_mod
    import envgym.agents.trainer as trainer

    if kl_trace:
        _trace_kl(out / "kl_trace.jsonl")

    config, sample_step = demo_mod.demo_config, trainer.sample_step
    dump = out / "train_rollouts.jsonl"

    def patched_config(*args: Any, **kwargs: Any) -> dict[str, Any]:
        cfg = copy.deepcopy(config(*args, **kwargs))  # the env kwargs are a module constant
        for dotted, value in overrides.items():
            *path, key = dotted.split(".")
            node = cfg
            for part in path:  # a list index is a number: `envs.0.kwargs.task_types`
                node = node[int(part)] if isinstance(node, list) else node[part]
            node[key] = value
        return cfg

    def dumping_step(step: int, *args: Any, **kwargs: Any) -> Any:
        got = sample_step(step, *args, **kwargs)
        with dump.open("a") as f:
            for t in got.trajs:
                f.write(json.dumps({"step": step, "seed": t.seed, "R": t.total_reward,
                                    "out": t.outcome, "acts": [u.action for u in t.turns]}) + "\n")
        return got

    import envgym.agents.sft as sft_mod
    fit = sft_mod.sft

    def saving_sft(model: Any, *args: Any, **kwargs: Any) -> list[float]:
        """The warm start, then a copy of the SFT model in out/sft_model for `read`."""
        from transformers import AutoTokenizer

        from envgym.agents.base_model import shipped_base_model
        losses = fit(model, *args, **kwargs)
        model.save_pretrained(out / "sft_model")
        source = overrides.get("model.policy", str(shipped_base_model()))
        AutoTokenizer.from_pretrained(source).save_pretrained(out / "sft_model")
        return losses

    demo_mod.demo_config, trainer.sample_step = patched_config, dumping_step
    sft_mod.sft = saving_sft
    out.mkdir(parents=True, exist_ok=True)
    dump.unlink(missing_ok=True)
    demo_mod.demo(out, steps=steps, eval_episodes=eval_episodes, seed=seed)


def _trace_kl(path: Path) -> None:
    """Wrap the update's KL term so each call (one micro-batch) appends its largest
    per-token |ref - logp| and its largest k3 to `path` (positions outside the trained
    tokens hold 0 in both log-prob tensors, so they never set the maximum)."""
    import envgym.agents.update as update

    penalty = update.kl_penalty
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)

    def traced(logp: Any, ref: Any, estimator: str) -> Any:
        kl = penalty(logp, ref, estimator)
        moved = (ref - logp).detach().abs()
        with path.open("a") as f:
            f.write(json.dumps({"max_abs_d": round(float(moved.max()), 3),
                                "k3_max": float(kl.detach().max())}) + "\n")
        return kl

    update.kl_penalty = traced


def _above(outcomes: list[dict[str, Any]]) -> float:
    return float(np.mean([o["score"] - o["chance"] for o in outcomes])) if outcomes else float("nan")


def block_stats(rows: list[dict[str, Any]], block: int = 10) -> list[dict[str, Any]]:
    """One summary per `block` training steps of the dumped rollouts (see module docstring).
    A group is one task's rollouts within one step."""
    groups: dict[tuple[int, int], list[dict[str, Any]]] = collections.defaultdict(list)
    for r in rows:
        groups[(r["step"], r["seed"])].append(r)
    out = []
    for first in range(1, max(r["step"] for r in rows) + 1, block):
        keys = [k for k in groups if first <= k[0] < first + block]
        eps = [r for k in keys for r in groups[k]]
        answered = [r["out"] for r in eps if r["out"].get("answer")]
        cov = [o for o in answered if o.get("coverage", 0) > 0]
        nocov = [o for o in answered if o.get("coverage", 0) == 0]
        adv: dict[bool, list[float]] = {True: [], False: []}
        flat = 0
        for k in keys:
            g = groups[k]
            ret = np.array([r["R"] for r in g])
            if len(g) < 2 or ret.std() <= 1e-8:
                continue  # the filter drops it: no advantage
            z = (ret - ret.mean()) / (ret.std(ddof=1) + 1e-6)
            for r, a in zip(g, z):
                adv[r["out"].get("coverage", 0) > 0].append(float(a))
            flat += len({r["out"].get("score") for r in g}) == 1
        zooms = collections.Counter(m.groups() for r in eps for a in r["acts"][:1]
                                    for m in [ZOOM_RE.search(a)] if m)
        out.append({
            "steps": f"{first}-{first + block - 1}", "episodes": len(eps),
            "answered": len(answered) / max(1, len(eps)),
            "a_share": float(np.mean([o["answer"] == "A" for o in answered])) if answered else 0.0,
            "above_chance": _above(answered), "covering": len(cov) / max(1, len(answered)),
            "above_covering": _above(cov), "above_not_covering": _above(nocov),
            "distinct_first_zooms": len(zooms),
            "top_zoom_share": zooms.most_common(1)[0][1] / len(eps) if zooms else 0.0,
            "adv_covering": float(np.mean(adv[True])) if adv[True] else float("nan"),
            "adv_not_covering": float(np.mean(adv[False])) if adv[False] else float("nan"),
            "groups": len(keys), "groups_one_accuracy_trained": flat})
    return out


def scripted(n: int) -> None:
    """Answered accuracy above chance and mean coverage per task type, per scripted policy."""
    import envgym
    from envgym.agents.demo import DEMO_ENV, DEMO_ENV_KWARGS
    from envgym.policy import load_policy

    env = envgym.make(DEMO_ENV, **DEMO_ENV_KWARGS, max_turns=4)
    for name in ("oracle", "heuristic", "random"):
        factory = load_policy(f"scripted:{name}", env_id=DEMO_ENV)
        by_type: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for k in range(n):
            _, info, _ = _play(env, factory(k), DEV_TASKS + k)
            if "chance" in info.get("outcome", {}):
                by_type[info["outcome"]["task_type"]].append(info["outcome"])
        answered = [o for os in by_type.values() for o in os if o.get("answer")]
        print(json.dumps({"policy": name, "answered": len(answered),
                          "above_chance": round(_above(answered), 3),
                          "per_type_above_chance_coverage": {
                              t: [round(_above([o for o in os if o.get("answer")]), 3),
                                  round(float(np.mean([o["coverage"] for o in os])), 2)]
                              for t, os in sorted(by_type.items())}}))


def _play(env: Any, policy: Any, task_seed: int) -> tuple[list[dict[str, Any]], dict[str, Any],
                                                           list[dict[str, Any]] | None]:
    """One scripted episode: (every message, the last info, the messages before the policy's
    first answer turn, or None if it never answered)."""
    obs, _ = env.reset(seed=task_seed)
    messages, done, info, prefix = list(obs), False, {}, None
    while not done:
        action = policy.act(env, messages)
        if "<answer>" in action and prefix is None:
            prefix = list(messages)
        new, _, terminated, truncated, info = env.step(action)
        messages += [{"role": "assistant", "content": action}, *new]
        done = terminated or truncated
    return messages, info, prefix


Case = tuple[list[dict[str, Any]], dict[str, Any], list[str]]


def _heuristic_prefixes(n: int, seed0: int = DEV_TASKS) -> list[Case]:
    """(messages up to the answer turn, outcome, option letters) of the heuristic on task seeds
    `seed0` + k (development tasks by default; 0 + k are the demo's training tasks, to tell a
    model that cannot fit its demonstrations from one that fits them without reading)."""
    import envgym
    from envgym.agents.demo import DEMO_ENV, DEMO_ENV_KWARGS
    from envgym.policy import load_policy

    env = envgym.make(DEMO_ENV, **DEMO_ENV_KWARGS, max_turns=4)
    factory, out = load_policy("scripted:heuristic", env_id=DEMO_ENV), []
    for k in range(n):
        messages, info, prefix = _play(env, factory(k), seed0 + k)
        letters = re.findall(r"^([A-Z])\)", messages[1]["content"], flags=re.M)
        if prefix is not None and "chance" in info.get("outcome", {}):
            out.append((prefix, info["outcome"], letters))
    return out


def _letter_variants(tok: Any, messages: list[dict[str, Any]],
                     letters: list[str]) -> tuple[list[list[int]], int]:
    """The ids of the answer turn with each letter, and where they part: the letter merges
    with the tag's '>' ('>A'), so the part they share ends one token before the head does."""
    head = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    variants = [tok(head + ANSWER_HEAD + letter + "</answer>").input_ids for letter in letters]
    from envgym.agents.base_probes import common_prefix
    return variants, common_prefix(variants)


def read_one(model_dir: str, cases: list[Case]) -> dict[str, Any]:
    """One model's forced-choice reading of `cases` (module docstring): above chance per task
    type and overall, and how often each letter was picked. `sampled` is the same expectation
    when the letter is drawn from the model's own odds over the options (temperature 1, as the
    demo evaluates), not the argmax: a model can rank the gold letter first and still sample
    it barely more often than chance."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    by_type: dict[str, list[float]] = collections.defaultdict(list)
    sampled: dict[str, list[float]] = collections.defaultdict(list)
    picks: collections.Counter[str] = collections.Counter()
    for messages, outcome, letters in cases:
        variants, start = _letter_variants(tok, messages, letters)
        scores = []
        for ids in variants:
            with torch.inference_mode():
                logp = model(torch.tensor([ids])).logits[0, :-1].log_softmax(-1)
            reply = torch.tensor(ids[start:])
            scores.append(float(logp[start - 1:].gather(1, reply[:, None]).sum()))
        pick = letters[int(np.argmax(scores))]
        picks[pick] += 1
        by_type[outcome["task_type"]].append(float(pick == outcome["gold"]) - outcome["chance"])
        odds = np.exp(np.array(scores) - max(scores))
        p_gold = odds[letters.index(outcome["gold"])] / odds.sum()
        sampled[outcome["task_type"]].append(float(p_gold) - outcome["chance"])
    return {"model": model_dir, **_summary(by_type), "picks": dict(sorted(picks.items())),
            "sampled": _summary(sampled)}


def _summary(by_type: dict[str, list[float]]) -> dict[str, Any]:
    every = [v for vs in by_type.values() for v in vs]
    return {"n": len(every), "above_chance": round(float(np.mean(every)), 3),
            "per_type": {t: [round(float(np.mean(v)), 3), len(v)]
                         for t, v in sorted(by_type.items())}}


def read(model_dirs: list[str], n: int, seed0: int = DEV_TASKS) -> None:
    """Forced-choice reading of each model on the heuristic's evidence (module docstring)."""
    cases = _heuristic_prefixes(n, seed0)
    for model_dir in model_dirs:
        print(json.dumps(read_one(model_dir, cases)))


def answer_sft(out: Path, n: int, epochs: int, start_from: str | None = None,
               only: str | None = None, block: int = 1000) -> None:
    """Fine-tune the shipped base (or `start_from`, an HF directory) on the heuristic's answer
    letters only (module docstring). `only` keeps the training tasks of one type (of the first
    `n`, about a quarter), so one epoch over many tasks asks whether that type fits the model
    in the environment's own frame, each task seen once; the letter loss is printed per
    `block` rows, ln 4 = 1.386 being chance for four options."""
    import random

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.base_model import shipped_base_model

    base = start_from or str(shipped_base_model())
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    rows = []
    for messages, outcome, letters in _heuristic_prefixes(n, 0):
        if only is not None and outcome["task_type"] != only:
            continue
        variants, start = _letter_variants(tok, messages, letters)
        gold = variants[letters.index(outcome["gold"])]
        rows.append((gold[:start], gold[start]))
    opt, rng = torch.optim.AdamW(model.parameters(), lr=1e-3), random.Random(0)
    torch.manual_seed(0)
    for epoch in range(epochs):
        rng.shuffle(rows)
        total = 0.0
        for b in range(0, len(rows), block):
            chunk = rows[b:b + block]
            loss = letter_pass(model, opt, chunk)
            total += loss * len(chunk)
            print(json.dumps({"epoch": epoch + 1, "rows": b + len(chunk),
                              "block_loss": round(loss, 4)}), flush=True)
        print(json.dumps({"epoch": epoch + 1, "letter_loss": round(total / len(rows), 4)}),
              flush=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    for seed0, split in ((0, "train"), (DEV_TASKS, "dev")):
        print(json.dumps({"split": split, **read_one(str(out), _heuristic_prefixes(300, seed0))}))


def letter_pass(model: Any, opt: Any, rows: list[tuple[list[int], int]], batch: int = 16
                ) -> float:
    """One optimiser pass over `rows` (head ids, answer-letter id) in order, `batch` at a time,
    on the letter's cross-entropy alone; returns the mean loss per row. Shared with
    `bench/read_learnability.py`, so both fine-tunes are the same update."""
    total = 0.0
    for b in range(0, len(rows), batch):
        loss = _letter_loss(model, rows[b:b + batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += float(loss.detach()) * len(rows[b:b + batch])
    return total / len(rows)


def _letter_loss(model: Any, batch: list[tuple[list[int], int]]) -> Any:
    """Cross-entropy of each row's answer-letter token after its (right-padded) head."""
    import torch

    width = max(len(ids) for ids, _ in batch)
    x = torch.zeros(len(batch), width, dtype=torch.long)
    mask = torch.zeros_like(x)
    for r, (ids, _) in enumerate(batch):
        x[r, :len(ids)], mask[r, :len(ids)] = torch.tensor(ids), 1
    logits = model(input_ids=x, attention_mask=mask).logits
    last = torch.tensor([len(ids) - 1 for ids, _ in batch])
    gold = torch.tensor([g for _, g in batch])
    return torch.nn.functional.cross_entropy(logits[torch.arange(len(batch)), last], gold)


def _parse_set(items: list[str]) -> dict[str, Any]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or "." not in key:
            raise SystemExit(f"--set wants SECTION.KEY=JSON, got {item!r}")
        out[key] = json.loads(value)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("seed", type=int)
    r.add_argument("--steps", type=int, default=60)
    r.add_argument("--eval", type=int, default=192)
    r.add_argument("--set", action="append", default=[])
    r.add_argument("--kl-trace", action="store_true")
    s = sub.add_parser("stats")
    s.add_argument("out", type=Path)
    sub.add_parser("scripted").add_argument("--n", type=int, default=300)
    rd = sub.add_parser("read")
    rd.add_argument("models", nargs="+")
    rd.add_argument("--n", type=int, default=300)
    rd.add_argument("--task-seed0", type=int, default=DEV_TASKS)
    ans = sub.add_parser("answer-sft")
    ans.add_argument("out", type=Path)
    ans.add_argument("--n", type=int, default=3000)
    ans.add_argument("--epochs", type=int, default=4)
    ans.add_argument("--from", dest="start_from", default=None,
                     help="an HF model directory to start from instead of the shipped base")
    ans.add_argument("--only", default=None, help="train on this task type alone")
    a = p.parse_args()
    if a.cmd == "run":
        if 0 <= a.seed <= 49:
            raise SystemExit("seeds 0-49 are registered (docs/demo.md); diagnose on others")
        run(a.out, a.seed, a.steps, a.eval, _parse_set(a.set), a.kl_trace)
    elif a.cmd == "scripted":
        scripted(a.n)
    elif a.cmd == "read":
        read(a.models, a.n, a.task_seed0)
    elif a.cmd == "answer-sft":
        answer_sft(a.out, a.n, a.epochs, a.start_from, a.only)
    else:
        rows = [json.loads(line) for line in (a.out / "train_rollouts.jsonl").open()]
        for b in block_stats(rows):
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in b.items()}))


if __name__ == "__main__":
    main()

"""`envgym demo`: the whole pipeline offline on a laptop CPU, with an honest before/after.

1. load the shipped pretrained base (`--policy tiny`: build a random-init tiny Qwen2);
2. SFT it on scripted demonstrations of `envgym/TimeSeries-v0` that carry the task's form
   and not its content: the base's zoom as the heuristic does, then answer a uniformly random
   letter (`guess`); the tiny model's take each turn from the oracle or the random baseline
   with equal odds, so it still emits junk turns, guesses early and zooms carelessly;
3. evaluate it on held-out tasks (seeds never used in training);
4. train it with GRPO-family RL and turn-level credit (`turn`, then `filter`), with a k3
   KL penalty to the SFT model;
5. evaluate again on the same held-out tasks.

The report directory gets `metrics.json`, the SFT data and evaluation trajectories, the
training `metrics.jsonl`, `reward_curve.png` and `report.html` (self-contained: curve,
before/after table, three held-out episodes before and after); the last line printed is the
held-out reward before -> after with 95% confidence intervals. Progress goes to stderr as
plain lines, one per phase and every few steps, so a piped or logged run is not silent.
Evaluation runs twice. Sampled at temperature 1 it measures the stochastic policy RL
optimises, and the verdict (intervals apart) is read there. Greedy, it measures the policy's
own answer. Answered accuracy above chance is reported from both: a temperature-1 draw adds the
spread of the letter odds to what the policy knows (docs/demo.md, attempts 12-13).

Robust by design, not by a lucky seed (every choice fixed on development seeds before the
ten-seed measurement of seeds 0-9 in `bench/demo_time.sh`): 60 RL steps, because at 40 the
training reward was still rising on most seeds and the slow seeds were the ones that missed;
the learning rate decays on a cosine to 0, so the policy evaluated last is not the one a single
noisy update just moved; 384 held-out tasks, because sampled success on 192 carries about 4.4
points of sampling noise in a before/after difference (about 3.1 on 384); the held-out tasks
are the same before and after, so the report also gives the paired per-task gain with its
interval.
`seed` drives the tiny model's initialisation, the noisy demonstrations, the SFT shuffle and
every rollout's sampling; the held-out tasks stay fixed, so seeds are comparable.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

from envgym.agents.config import load_config
from envgym.agents.report import html_report, mean_ci, plot_curve, read_metrics

__all__ = ["DEMO_ENV", "demo", "demo_config"]

DEMO_ENV = "envgym/TimeSeries-v0"
DEMO_ENV_KWARGS = {"series_length": 512, "sketch_points": 8, "zoom_points": 8, "max_rounds": 2,
                   "tool_format": "tag", "format_rules": "lenient"}


# The recipe per starting model; each choice was fixed on development seeds (docs/demo.md).
# The random-init tiny model needs a high SFT rate and many epochs to emit turns at all, and its
# oracle/random demonstrations are what it learns the form from. The base (attempts 12-15)
# already writes tags: a high rate would wash out its pretraining, and demonstrations that
# answer well would teach the content in SFT, leaving RL nothing to show. So it is warmed up for
# two epochs on `guess` (the heuristic's zooms, then a uniformly random letter; four epochs
# left RL learning content on 5 seeds of 10, two on 4 dev seeds of 4), on the two task types
# whose evidence two zooms can reach (trend, anomaly; the other three are at chance for any
# reader), and trained with Dr. GRPO's advantage (the group mean as baseline, no division by a
# spread that zoom costs alone can make tiny), a KL of 0.5 to that flat warm start (at 0.01
# the letters drifted onto one option, at 0.1 on 2 dev seeds of 4), and 16 rollouts of 3 tasks
# (more answers per group to compare than 8 of 6, for the same 48 episodes and less CPU).
# A 10-step linear warm-up of the RL rate (attempt 17): without it AdamW's first step moves
# every weight by about the full rate whatever its gradient, and that one step moved single
# action tokens' log-probs by up to 9 nats (step-1 KL up to 47 nats per token on seeds 30-39,
# 0.001 with the warm-up); the tiny model keeps its validated schedule.
RECIPES: dict[str, dict[str, Any]] = {
    "tiny": {"model": {"policy": "tiny", "tiny_hidden_size": 96, "tiny_layers": 2},
             "task_types": None, "scripted": {"oracle": 0.5, "random": 0.5},
             "sft_epochs": 12, "sft_lr": 5e-3, "turn": {"gamma": 1.0}, "kl_coef": 0.01,
             "group_size": 8, "tasks_per_step": 6},
    "base": {"model": {"policy": "base"},
             "task_types": ["trend", "anomaly"], "scripted": {"guess": 1.0},
             "sft_epochs": 2, "sft_lr": 1e-3, "turn": {"gamma": 1.0, "std_norm": False},
             "kl_coef": 0.5, "group_size": 16, "tasks_per_step": 3, "warmup_steps": 10},
}


def demo_config(out: Path, *, steps: int = 60, eval_episodes: int = 384,
                sft_episodes: int = 192, sft_epochs: int | None = None, seed: int = 0,
                policy: str = "base") -> dict[str, Any]:
    """The demo's training config (also shipped as `agents/configs/demo_cpu.toml`).
    `policy`: `base` (the shipped pretrained base, the default) or `tiny` (random init, fast)."""
    if policy not in RECIPES:
        from envgym.errors import InvalidConfig
        raise InvalidConfig(f"demo policy must be one of {sorted(RECIPES)}, not {policy!r}")
    r = RECIPES[policy]
    kwargs = dict(DEMO_ENV_KWARGS, **({"task_types": r["task_types"]} if r["task_types"] else {}))
    return {
        "seed": seed, "output_dir": str(out / "rl"), "steps": steps, "checkpoint_every": 0,
        "model": dict(r["model"]),
        "envs": [{"id": DEMO_ENV, "kwargs": kwargs, "train_seeds": [0, 100_000],
                  "eval_seeds": [1_000_000, 1_000_000 + eval_episodes]}],
        "rollout": {"group_size": r["group_size"], "tasks_per_step": r["tasks_per_step"],
                    "max_turns": 4, "max_tokens": 40, "temperature": 1.0,
                    "eval_temperature": 1.0, "eval_episodes": eval_episodes},
        "credit": ["turn", "filter"], "credit_options": {"turn": dict(r["turn"])},
        # tiny: k3 KL to the SFT model keeps it from collapsing onto one junk turn (seen once
        # in four runs without it at lr 5e-4); at 0.01 rather than 0.05 it holds the policy
        # less tightly to the noisy warm start (dev seeds 103/104 at 60 steps: +28.6/+16.7
        # points against +25.5/+15.1). 60 steps, not 40: at 40 the training reward was still
        # rising on 8 of 10 seeds, and on development seeds 102-104 the success gain was
        # +16.1/+17.2/+11.5 points at 40 steps, +21.9/+25.5/+15.1 at 60 (lr 8e-4 at 40 steps:
        # +12.5/+17.7/+15.1; 80 steps does not fit 6 minutes)
        "ppo": {"clip_low": 0.2, "clip_high": 0.28, "epochs": 1, "minibatches": 2,
                "kl_coef": r["kl_coef"], "kl_estimator": "k3"},
        "optim": {"lr": 4e-4, "max_grad_norm": 1.0, "schedule": "cosine",
                  "warmup_steps": r.get("warmup_steps", 0)},
        "sft": {"scripted": dict(r["scripted"]), "episodes": sft_episodes,
                "epochs": sft_epochs or r["sft_epochs"], "batch_size": 16, "lr": r["sft_lr"]},
        "log": {"tensorboard": False, "progress": True},
    }


def _phase(t0: float, text: str) -> None:
    """One progress line on stderr: wall seconds so far, the process's CPU seconds (which a
    loaded machine inflates far less than wall time) and what starts now."""
    print(f"[demo {time.perf_counter() - t0:5.0f} s, cpu {time.process_time():5.0f} s] {text}",
          file=sys.stderr, flush=True)


def demo(out: Path = Path("demo_out"), *, steps: int = 60, eval_episodes: int = 384,
         sft_episodes: int = 192, sft_epochs: int | None = None, threads: int = 1,
         seed: int = 0, policy: str = "base") -> dict[str, Any]:
    """Run the demo; return the report (also written to `out/metrics.json`).

    One torch thread by default: the run was validated that way (295 s of CPU in all,
    intervals apart), and where the cores are shared two spinning OpenMP threads cost about
    4x the CPU for the same SFT step. The second core is left to the rollout engine's
    environment and tokenizer threads; `threads=2` was not measured on an idle machine."""
    from transformers.utils import logging as hf_logging

    from envgym.agents.learner import load_model
    from envgym.agents.policies.hf import HFPolicy
    from envgym.agents.sft import noisy_demonstrations, sft, tokenize_trajectories
    from envgym.agents.trainer import evaluate, train
    from envgym.trajectory import write_trajectories

    hf_logging.disable_progress_bar()  # "Loading weights" bars say nothing to a newcomer
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    out.mkdir(parents=True, exist_ok=True)
    cfg = load_config(demo_config(out, steps=steps, eval_episodes=eval_episodes,
                                  sft_episodes=sft_episodes, sft_epochs=sft_epochs, seed=seed,
                                  policy=policy))
    env = cfg.envs[0]
    t0 = time.perf_counter()
    _phase(t0, f"1/5 loading the shipped base model" if policy == "base" else
               f"1/5 building the offline tiny model in {out / 'tiny-model'}")
    model, tokenizer, path = load_model(cfg.model, out, cfg.seed)                 # 1
    policy = HFPolicy(path, model=model, tokenizer=tokenizer, seed=cfg.seed)
    n_params = sum(p.numel() for p in model.parameters())
    _phase(t0, f"2/5 SFT warm start ({n_params / 1e6:.2f}M parameters) on {cfg.sft.episodes} "
               f"scripted episodes of {env.id}, {cfg.sft.epochs} epochs")
    demos = noisy_demonstrations(env.id, cfg.sft.scripted, cfg.sft.episodes, env.train_seeds,
                                 {"max_turns": cfg.rollout.max_turns, **env.kwargs}, cfg.seed)
    demos = tokenize_trajectories(demos, policy.chat)
    write_trajectories(out / "sft_data.jsonl", demos)
    every = max(1, cfg.sft.epochs // 4)

    def log_epoch(epoch: int, metrics: dict[str, float]) -> None:
        if epoch % every == 0 or epoch == cfg.sft.epochs:
            _phase(t0, f"    SFT epoch {epoch}/{cfg.sft.epochs}  loss {metrics['sft/loss']:.3f}")

    sft_losses = sft(model, demos, epochs=cfg.sft.epochs, batch_size=cfg.sft.batch_size,  # 2
                     lr=cfg.sft.lr, seed=cfg.seed, pad_id=tokenizer.pad_token_id or 0,
                     log=log_epoch, final_turn_weight=cfg.sft.final_turn_weight)
    t_sft = time.perf_counter() - t0
    _phase(t0, f"3/5 held-out evaluation of the SFT model ({cfg.rollout.eval_episodes} tasks)")
    greedy = cfg.model_copy(update={"rollout": cfg.rollout.model_copy(
        update={"eval_temperature": 0.0})})
    before = evaluate(policy, cfg, 0, out)                                        # 3
    before_greedy = evaluate(policy, greedy, 0, out / "greedy")
    _phase(t0, f"4/5 RL: {cfg.steps} steps of GRPO + turn-level credit, "
               f"{cfg.rollout.tasks_per_step} tasks x {cfg.rollout.group_size} rollouts each; "
               "then the same held-out evaluation")
    result = train(cfg, model=model, tokenizer=tokenizer, model_path=path,        # 4, 5
                   eval_at_start=False, overwrite=True)  # each demo is a fresh run
    after = result["evals"][cfg.steps]
    after_greedy = evaluate(policy, greedy, cfg.steps, out / "greedy")
    _phase(t0, f"5/5 writing the report to {out}")
    report = _report(out, cfg, demos, sft_losses, before, after, t_sft, time.perf_counter() - t0,
                     greedy=(before_greedy, after_greedy))
    ci_before, ci_after = report["reward_sft"], report["reward_rl"]
    gain, g = report["reward_gain_paired"], report["greedy"]
    print(f"held-out reward ({ci_before['n']} episodes, 95% CI): SFT "
          f"{ci_before['mean']:.2f} [{ci_before['lo']:.2f}, {ci_before['hi']:.2f}] -> SFT+RL "
          f"{ci_after['mean']:.2f} [{ci_after['lo']:.2f}, {ci_after['hi']:.2f}]; paired gain "
          f"{gain['mean']:+.2f} [{gain['lo']:+.2f}, {gain['hi']:+.2f}]; success "
          f"{report['success_sft']:.1%} -> {report['success_rl']:.1%}; answered accuracy "
          f"above chance, greedy {g['answered_sft']['above_chance']:+.1%} -> "
          f"{g['answered_rl']['above_chance']:+.1%}, sampled "
          f"{report['answered_sft']['above_chance']:+.1%} -> "
          f"{report['answered_rl']['above_chance']:+.1%}; "
          f"{'improved' if report['improved'] else 'NOT improved'} (intervals "
          f"{'apart' if report['improved'] else 'overlap'})")
    return report


def paired_gain(before: list, after: list) -> dict[str, float]:
    """Mean per-task reward gain over the held-out tasks both evaluations completed, with
    its 95% interval: the task's own difficulty cancels, so this is the policy's change."""
    first = {t.seed: t.total_reward for t in before if t.error is None}
    diffs = [t.total_reward - first[t.seed] for t in after if t.error is None and t.seed in first]
    return mean_ci(diffs)


def answered(trajectories: list) -> dict[str, float]:
    """Content, apart from form: the share of episodes that gave an answer, and among those
    the accuracy above the task's chance rate (mean of score - chance; guessing sits at 0
    whatever the mix of task types). A policy that only learns to answer more often moves
    the first number, one that learns the task moves the second."""
    done = [t.outcome for t in trajectories if t.error is None and t.outcome]
    given = [o for o in done if o.get("answer") is not None and "chance" in o]
    above = sum(o["score"] - o["chance"] for o in given) / len(given) if given else 0.0
    return {"episodes": len(done), "answered": len(given),
            "answered_rate": len(given) / len(done) if done else 0.0, "above_chance": above}


def _report(out: Path, cfg: Any, demos: list, sft_losses: list[float], before: dict,
            after: dict, t_sft: float, t_total: float, greedy: tuple[dict, dict]
            ) -> dict[str, Any]:
    """metrics.json, reward_curve.png and report.html."""
    from envgym.trajectory import read_trajectories

    env = cfg.envs[0]
    name = env.id.split("/")[-1]
    ci_before, ci_after = mean_ci(before["_rewards"]), mean_ci(after["_rewards"])
    records = read_metrics(cfg.output_dir / "metrics.jsonl")
    png = plot_curve(records, "reward", out / "reward_curve.png",
                     title=f"{env.id}: training reward per step (GRPO + turn credit)",
                     evals=[("SFT", ci_before), ("SFT+RL", ci_after)])
    report = {
        "env": env.id, "env_kwargs": env.kwargs, "demonstrations": len(demos),
        "demonstration_reward": sum(t.total_reward for t in demos) / len(demos),
        "sft_loss_per_epoch": sft_losses, "rl_steps": cfg.steps,
        "eval_episodes": ci_before["n"], "eval_seeds": list(env.eval_seeds),
        "reward_sft": ci_before, "reward_rl": ci_after,
        "success_sft": before[f"eval/{name}/success"],
        "success_rl": after[f"eval/{name}/success"],
        "policy": cfg.model.policy,
        "improved": ci_after["lo"] > ci_before["hi"],
        "seed": cfg.seed,
        "greedy": {"reward_sft": mean_ci(greedy[0]["_rewards"]),
                   "reward_rl": mean_ci(greedy[1]["_rewards"]),
                   "success_sft": greedy[0][f"eval/{name}/success"],
                   "success_rl": greedy[1][f"eval/{name}/success"]},
        "seconds": {"sft": t_sft, "total": t_total, "cpu": time.process_time()},
        "config": cfg.model_dump(mode="json"),
    }
    first = list(read_trajectories(out / f"eval_{name}_step0.jsonl"))
    after_file = cfg.output_dir / f"eval_{name}_step{cfg.steps}.jsonl"
    final = list(read_trajectories(after_file))
    report["reward_gain_paired"] = paired_gain(first, final)
    report["answered_sft"], report["answered_rl"] = answered(first), answered(final)
    report["content_gain"] = (report["answered_rl"]["above_chance"]
                              - report["answered_sft"]["above_chance"])
    g = report["greedy"]
    g["answered_sft"], g["answered_rl"] = (answered(list(read_trajectories(
        out / "greedy" / f"eval_{name}_step{step}.jsonl"))) for step in (0, cfg.steps))
    g["content_gain"] = g["answered_rl"]["above_chance"] - g["answered_sft"]["above_chance"]
    _write_json(out / "metrics.json", report)
    last = {t.seed: t for t in final}
    pairs = [(t, last[t.seed]) for t in first if t.seed in last][:3]
    fmt = lambda ci: f"{ci['mean']:.2f} [{ci['lo']:.2f}, {ci['hi']:.2f}]"  # noqa: E731
    summary = [("mean reward, 95% CI", fmt(ci_before), fmt(ci_after)),
               ("success rate", f"{report['success_sft']:.0%}", f"{report['success_rl']:.0%}"),
               ("greedy success rate", f"{report['greedy']['success_sft']:.0%}",
                f"{report['greedy']['success_rl']:.0%}"),
               ("paired reward gain, 95% CI", "", fmt(report["reward_gain_paired"])),
               ("answered accuracy above chance, greedy",
                f"{g['answered_sft']['above_chance']:+.1%}",
                f"{g['answered_rl']['above_chance']:+.1%}"),
               ("answered accuracy above chance, sampled",
                f"{report['answered_sft']['above_chance']:+.1%}",
                f"{report['answered_rl']['above_chance']:+.1%}"),
               ("episodes", str(ci_before["n"]), str(ci_after["n"]))]
    html_report(out / "report.html", title=f"envgym demo: {env.id}", summary=summary, png=png,
                episodes=pairs, notes=(
                    f"{'Base' if cfg.model.policy == 'base' else 'Tiny'} model, SFT on "
                    f"{len(demos)} scripted episodes, then {cfg.steps} "
                    f"RL steps; held-out tasks (seeds {env.eval_seeds[0]}..), sampled at "
                    f"temperature {cfg.rollout.eval_temperature}. Improved (intervals apart): "
                    f"{report['improved']}. {t_total:.0f} s in all, SFT {t_sft:.0f} s."))
    return report


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """Atomically: a killed demo never leaves half a metrics.json behind."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)

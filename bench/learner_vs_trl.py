"""A whole GRPO step, generation plus update: envgym's trainer against TRL's GRPOTrainer.

    python bench/learner_vs_trl.py [--steps 12] [--rounds 2] [--threads 1]

Both sides train the same offline tiny Qwen2 (fresh weights each run) on the same single-turn
task (`bench/arith.py`: "Compute a+b=", reward 1 for the right sum) with the same settings:
4 prompts x 4 samples per step, 64 completion tokens, temperature 1, AdamW at lr 1e-4
(`--lr`), no KL, one optimiser step per generation (PPO clip 0.2 / 0.28, token-mean loss).
Runs alternate A B A B in one process; the first `--warmup` steps of each run are left out.
Each side reports its median step time, the split between generation (envgym: the engine's rollout;
TRL: `_generate_and_score_completions`) and the update (everything else in the step), and
generated tokens per second, wall and CPU seconds side by side (`bench/trl_timing.py`).
`ratio` is envgym's tokens/s over TRL's: above 1, envgym is faster; below 1, it is slower,
and the line says so. The goal (issue 41) is 1.3: a group's shared prompt is prefilled once
on envgym's side, G times on TRL's, and envgym's update runs packed, without padding.
`--max-tokens-per-microbatch 0` runs envgym's update padded (the comparison before packing).
`zero_signal_fraction` is each side's mean share of groups whose rewards were all equal (no
learning signal: zero advantages, so a zero gradient); envgym's update skips the backward
of such rows (`agents/update.py`), TRL's computes it. `--no-skip-zero-signal` runs every
envgym row through the backward, as before that change (the comparison on steps with signal).
`--model base` starts both sides from the shipped pretrained base (`agents/base_weights/`,
fp32) instead of the random tiny model, and `--reward graded` gives partial credit by distance
to the sum (`bench/arith.py`): the base writes numbers near the sum but cannot add, so only
with both do groups carry signal; `--lr` sets both sides' learning rate, since at the default
1e-4 the base's sampling collapses within a few steps and its groups lose the signal again
(docs/performance.md, third and fourth single-turn attempts).
Needs the `trl` extra (`pip install -e '.[trl]'`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import arith  # noqa: E402  (registers bench/Arith-v0)
from learner_shapes import device_settings, mfu, parameters, reshape  # noqa: E402
from trl_timing import envgym_clock, ratios, summary, trl_clock, trl_seq_tokens  # noqa: E402

RUN = {"device": "cpu"}  # main() sets it from --device

PROMPTS, GROUP, MAX_TOKENS = 4, 4, 64
ZERO = ("zero_signal_fraction",)  # reported beside the timings (a mean over steps)
TASK = {"reward": "exact", "lr": 1e-4}  # main() sets them from --reward, --lr (both sides)


def envgym_run(model_dir: Path, steps: int, seed: int, budget: int) -> list[dict[str, float]]:
    """Per step: seconds, generation seconds (wall from the trainer's metrics, CPU from
    `envgym_clock`), generated tokens."""
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train

    out = Path(tempfile.mkdtemp(prefix="envgym-bench-"))
    cfg = load_config({
        "seed": seed, "output_dir": str(out), "steps": steps, "checkpoint_every": 0,
        "model": {"policy": str(model_dir), **device_settings(RUN["device"])["envgym"]},
        "envs": [{"id": arith.ENV_ID, "kwargs": {"reward": TASK["reward"]},
                  "train_seeds": [0, 100_000],
                  "eval_seeds": [100_000, 100_001]}],
        "rollout": {"group_size": GROUP, "tasks_per_step": PROMPTS, "max_turns": 1,
                    "max_tokens": MAX_TOKENS, "temperature": 1.0, "eval_episodes": 1},
        "optim": {"lr": TASK["lr"]}, "ppo": {"kl_coef": 0.0, "loss_agg": "token_mean",
                                     "max_tokens_per_microbatch": budget},
        "log": {"tensorboard": False, "progress": False}})
    with envgym_clock() as cpu:
        train(cfg, eval_at_start=False)
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r.get("step", 0) >= 1 and "time/step_s" in r]
    return [{"step_s": r["time/step_s"], "gen_s": r["time/rollout_s"],
             "step_cpu": c["gen_cpu"] + c["update_cpu"], "gen_cpu": c["gen_cpu"],
             "seq_tokens": r["throughput/tokens_per_s"] * r["time/step_s"],
             "tokens": r["action_tokens"] * PROMPTS * GROUP,
             "zero_signal_fraction": r.get("adv/zero_fraction", float("nan"))}
            for r, c in zip(rows, cpu, strict=True)]


def trl_run(model_dir: Path, steps: int, seed: int, budget: int = 0) -> list[dict[str, float]]:
    """The same for TRL: a callback times each optimiser step, a wrapper its generation."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    problems = [arith.problem(s) for s in range(steps * PROMPTS)]
    data = Dataset.from_dict({"prompt": [[{"role": "user", "content": p}] for p, _ in problems],
                              "answer": [a for _, a in problems]})

    def reward(completions, answer, **_):
        return [arith.grade(c[0]["content"] if isinstance(c, list) else c, a, TASK["reward"])
                for c, a in zip(completions, answer, strict=True)]

    args = GRPOConfig(
        output_dir=tempfile.mkdtemp(prefix="trl-bench-"),
        per_device_train_batch_size=PROMPTS * GROUP,
        num_generations=GROUP, max_completion_length=MAX_TOKENS, max_steps=steps,
        learning_rate=TASK["lr"], lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0,
        max_grad_norm=1.0, beta=0.0, epsilon=0.2, epsilon_high=0.28, loss_type="dapo",
        temperature=1.0, top_p=1.0, top_k=0, **device_settings(RUN["device"])["trl"],
        report_to="none",
        save_strategy="no", logging_steps=1, disable_tqdm=True, seed=seed,
        dataloader_num_workers=0, shuffle_dataset=False, gradient_checkpointing=False)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    trainer = GRPOTrainer(model=model,
                          reward_funcs=reward, args=args, train_dataset=data,
                          processing_class=AutoTokenizer.from_pretrained(model_dir))
    record = trl_clock(trainer)
    with contextlib.redirect_stdout(sys.stderr):  # its per-step log dicts; stdout is ours
        trainer.train()
    trl_seq_tokens(trainer, record)
    lengths = [h["completions/mean_length"] for h in trainer.state.log_history
               if "completions/mean_length" in h]
    zero = [h["frac_reward_zero_std"] for h in trainer.state.log_history
            if "frac_reward_zero_std" in h]
    for r, n, z in zip(record, lengths, zero, strict=False):
        r["tokens"] = n * PROMPTS * GROUP
        r["zero_signal_fraction"] = z
    return record


def start_model(args: argparse.Namespace) -> Path:
    """The directory both sides load: the shipped base, `--tiny`, or a fresh tiny model
    (reshaped to `--shape`)."""
    if args.model == "base":
        from envgym.agents.base_model import shipped_base_model
        return Path(shipped_base_model())
    from envgym.agents.tiny import build_tiny_model
    model_dir = Path(args.tiny or build_tiny_model(tempfile.mkdtemp(), include_envs=False))
    if not args.tiny:
        reshape(model_dir, args.shape)
    return model_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads, both sides")
    parser.add_argument("--tiny", help="tiny model dir (built when omitted)")
    parser.add_argument("--shape", default="tiny", choices=["tiny", "qwen0.5b"],
                        help="model shape (qwen0.5b: random weights, for a GPU)")
    parser.add_argument("--model", default="tiny", choices=["tiny", "base"],
                        help="start model: random tiny, or the shipped pretrained base")
    parser.add_argument("--reward", default="exact", choices=list(arith.REWARDS),
                        help="exact sum only, or partial credit by distance (both sides)")
    parser.add_argument("--lr", type=float, default=1e-4,
                        help="AdamW learning rate, both sides (a step costs the same at any lr; "
                             "a high one can collapse the base's sampling and its signal)")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda (bf16 on both sides)")
    parser.add_argument("--peak-tflops", type=float, default=790.0,
                        help="the device's peak bf16 TFLOP/s, for MFU (H200: ~790 measured)")
    parser.add_argument("--max-tokens-per-microbatch", type=int, default=16384,
                        help="envgym's packed update budget; 0: padded rows")
    parser.add_argument("--no-skip-zero-signal", action="store_true",
                        help="envgym: run zero-advantage rows through the backward too")
    parser.add_argument("--envgym-only", action="store_true",
                        help="time envgym alone (where TRL cannot be installed)")
    args = parser.parse_args()
    if args.model == "base" and (args.tiny or args.shape != "tiny"):
        parser.error("--model base is the shipped model as it is: no --tiny or --shape")
    try:
        import trl
    except ImportError:
        if not args.envgym_only:
            raise SystemExit("bench/learner_vs_trl.py needs TRL: pip install 'envgym[trl]' "
                             "(or --envgym-only)") from None
        trl = None
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore", FutureWarning)
    if args.no_skip_zero_signal:
        import envgym.agents.update
        envgym.agents.update.SKIP_ZERO_SIGNAL = False
    RUN["device"], TASK["reward"], TASK["lr"] = args.device, args.reward, args.lr
    model_dir = start_model(args)
    n_params = parameters(model_dir)
    runs: dict[str, list[dict[str, float]]] = {"envgym": [], "trl": []}
    for r in range(args.rounds):  # A B A B: load drifts hit both sides alike
        for name, run in (("envgym", envgym_run), ("trl", trl_run))[:1 if trl is None else 2]:
            steps = run(model_dir, args.steps + args.warmup, seed=r,
                        budget=args.max_tokens_per_microbatch)
            runs[name] += steps[args.warmup:]
            print(json.dumps({"bench": "learner_vs_trl_run", "side": name, "round": r,
                              **summary(steps[args.warmup:], ZERO)}), file=sys.stderr,
                  flush=True)
    if trl is None:
        ours = summary(runs["envgym"], ZERO)
        print(json.dumps({"bench": "learner_vs_trl", "trl_version": None, "device": args.device,
                          "model": args.model, "reward": args.reward, "lr": args.lr,
                          "shape": args.shape, "parameters": n_params,
                          "mfu": {"envgym": round(mfu(ours.get("seq_tokens_per_s", 0.0),
                                                      n_params, args.peak_tflops), 5)},
                          "envgym": ours, "verdict": "TRL not installed: envgym alone"}))
        return
    ours, theirs = summary(runs["envgym"], ZERO), summary(runs["trl"], ZERO)
    ratio = ours["tokens_per_s"] / theirs["tokens_per_s"]
    cpu_ratio = ours["tokens_per_cpu_s"] / theirs["tokens_per_cpu_s"]  # decides the goal
    print(json.dumps({
        "bench": "learner_vs_trl", "trl_version": trl.__version__, "prompts": PROMPTS,
        "group": GROUP, "max_tokens": MAX_TOKENS, "steps_per_run": args.steps,
        "rounds": args.rounds, "threads": args.threads,
        "max_tokens_per_microbatch": args.max_tokens_per_microbatch,
        "skip_zero_signal": not args.no_skip_zero_signal,
        "model": args.model, "reward": args.reward, "lr": args.lr,
        "device": args.device, "shape": args.shape, "parameters": n_params,
        "mfu": {side: round(mfu(x.get("seq_tokens_per_s", 0.0), n_params, args.peak_tflops), 5)
                for side, x in (("envgym", ours), ("trl", theirs))},
        "envgym": ours, "trl": theirs, **ratios(ours, theirs),
        "goal": ">= 1.3 in tokens per CPU second", "meets_goal": cpu_ratio >= 1.3,
        "verdict": (f"envgym is {cpu_ratio:.2f}x TRL's tokens per CPU second "
                    f"({ratio:.2f}x per wall second)") if cpu_ratio >= 1
                   else f"envgym is SLOWER than TRL: {cpu_ratio:.2f}x its tokens per CPU second"}))


if __name__ == "__main__":
    main()

"""Why the demo's SFT was slow, measured: one SFT step on the demo's own demonstrations, the old
way (full-vocabulary log-softmax at every position, every minibatch padded to the dataset's
longest row) against ours (`agents/sft.py`: the vocabulary head only where an action token is
predicted, each minibatch cut to its own longest row), alternating A B A B in one process.

Prints one JSON line: the share of tokens that carry loss, padding per minibatch, and the
seconds (wall and CPU) per step of each way. Run: `python bench/sft_step.py [--threads 2]`.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from envgym.agents.config import load_config
from envgym.agents.demo import demo_config
from envgym.agents.learner import build_batch, load_model, naive_token_logprobs
from envgym.agents.policies.hf import HFPolicy
from envgym.agents.sft import _trim, action_nll, noisy_demonstrations, tokenize_trajectories


def old_step(model, part) -> None:
    logp, _ = naive_token_logprobs(model, part)
    (-(logp * part.loss_mask).sum() / part.loss_mask.sum()).backward()


def new_step(model, part) -> None:
    nll, n = action_nll(model, _trim(part))
    (nll / n).backward()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    out = Path(tempfile.mkdtemp(prefix="envgym-sft-bench."))
    cfg = load_config(demo_config(out))
    env = cfg.envs[0]
    model, tokenizer, path = load_model(cfg.model, out, cfg.seed)
    chat = HFPolicy(path, model=model, tokenizer=tokenizer).chat
    demos = noisy_demonstrations(env.id, cfg.sft.scripted, 64, env.train_seeds,
                                 {"max_turns": cfg.rollout.max_turns, **env.kwargs}, cfg.seed)
    batch = build_batch(tokenize_trajectories(demos, chat), pad_id=tokenizer.pad_token_id or 0)
    parts = [batch.select(list(range(i, i + cfg.sft.batch_size)))
             for i in range(0, len(batch), cfg.sft.batch_size)]
    model.train()
    times: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
    for r in range(args.rounds):
        for name, step in (("old", old_step), ("new", new_step)):
            part = parts[r % len(parts)]
            wall, cpu = time.perf_counter(), time.process_time()
            step(model, part)
            model.zero_grad(set_to_none=True)
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    real = batch.attention_mask.sum().item()
    trimmed = sum(_trim(p).input_ids.numel() for p in parts)
    mean = lambda xs, i: sum(x[i] for x in xs[1:]) / max(1, len(xs) - 1)  # noqa: E731 (first: warm-up)
    print(json.dumps({
        "bench": "sft_step", "threads": args.threads, "rows_per_step": cfg.sft.batch_size,
        "loss_token_share": round(batch.loss_mask.sum().item() / real, 3),
        "padding_share_dataset_width": round(1 - real / batch.input_ids.numel(), 3),
        "padding_share_trimmed": round(1 - real / trimmed, 3),
        "old_s_per_step": round(mean(times["old"], 0), 3),
        "new_s_per_step": round(mean(times["new"], 0), 3),
        "old_cpu_s_per_step": round(mean(times["old"], 1), 3),
        "new_cpu_s_per_step": round(mean(times["new"], 1), 3),
        "speedup_cpu": round(mean(times["old"], 1) / max(1e-9, mean(times["new"], 1)), 2),
    }))


if __name__ == "__main__":
    main()

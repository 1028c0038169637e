"""Peak memory of one learner update (forward + backward of the PPO log-probs and entropy) on a
randomly initialised Qwen2.5-0.5B-sized model on CPU: full-vocabulary fp32 logits at every
position (before) against `LogprobModel`'s chunks at loss positions only (after).

    python bench/learner_memory.py [--layers 4] [--batch 4] [--seq 512] [--repeats 1]

Each measurement is a fresh process (peak RSS, `VmHWM`), alternating before/after. Prints one
JSON line: peaks, the peak above the loaded model (what the log-prob computation adds), and
the after/before ratios. Gradient checkpointing is on, as it is for real models, so the
vocabulary projection is what dominates the difference.

Width, heads and the 151,936-token vocabulary are Qwen2.5-0.5B's; the default depth is 4 of its
24 layers so that a run fits a shared 2-core CPU box (`--layers 24` for the full model: the
vocabulary term, which is what chunking changes, does not depend on depth; the parameter and
gradient baseline grows by ~1.4 GB per 4 layers). At 2 x 256 tokens the full-vocabulary logits
(0.3 GB) are smaller than the gradients and the two peaks are equal; at realistic RL
micro-batches (thousands of tokens) they dominate.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys


def _rss_kb(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(field)


def child(variant: str, layers: int, batch: int, seq: int) -> dict:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from envgym.agents.learner import LogprobModel, TokenBatch, naive_token_logprobs, token_logprobs

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=151936, hidden_size=896, intermediate_size=4864,
                         num_hidden_layers=layers, num_attention_heads=14, num_key_value_heads=2,
                         tie_word_embeddings=True, max_position_embeddings=4096)
    model = Qwen2ForCausalLM(config)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    ids = torch.randint(0, config.vocab_size, (batch, seq))
    mask = torch.zeros(batch, seq)
    mask[:, seq // 2:] = 1  # the second half of each sequence: the action tokens
    adv = torch.randn(batch, seq) * mask
    tb = TokenBatch(ids, torch.ones(batch, seq, dtype=torch.long), mask, adv, torch.zeros(batch, seq))
    base = _rss_kb("VmRSS")
    if variant == "before":
        lp, ent = naive_token_logprobs(model, tb)
    else:
        lp, ent = token_logprobs(LogprobModel(model), tb, with_entropy=True)
    loss = -(lp * adv).sum() / mask.sum() - 0.01 * (ent * mask).sum() / mask.sum()
    loss.backward()
    return {"variant": variant, "peak_mb": _rss_kb("VmHWM") / 1024, "model_mb": base / 1024,
            "loss": float(loss)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--child", default=None)
    args = ap.parse_args()
    shape = [str(args.layers), str(args.batch), str(args.seq)]
    if args.child:
        print(json.dumps(child(args.child, args.layers, args.batch, args.seq)))
        return
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for _ in range(args.repeats):
        for variant in ("before", "after"):  # A B A B
            out = subprocess.run([sys.executable, __file__, "--child", variant,
                                  "--layers", shape[0], "--batch", shape[1], "--seq", shape[2]],
                                 capture_output=True, text=True, check=True,
                                 env={"OMP_NUM_THREADS": "2", **_env()})
            runs[variant].append(json.loads(out.stdout.strip().splitlines()[-1]))
    peak = {v: max(r["peak_mb"] for r in rs) for v, rs in runs.items()}
    extra = {v: max(r["peak_mb"] - r["model_mb"] for r in rs) for v, rs in runs.items()}
    print(json.dumps({
        "bench": "learner_memory", "model": "qwen2.5-0.5b-config (random init)",
        "layers": args.layers, "batch": args.batch, "seq": args.seq, "loss_positions": "half",
        "peak_mb_before": round(peak["before"]), "peak_mb_after": round(peak["after"]),
        "peak_ratio_after_over_before": round(peak["after"] / peak["before"], 3),
        "extra_mb_before": round(extra["before"]), "extra_mb_after": round(extra["after"]),
        "extra_ratio_after_over_before": round(extra["after"] / extra["before"], 3),
        "loss_before": runs["before"][0]["loss"], "loss_after": runs["after"][0]["loss"]}))


def _env() -> dict:
    import os
    return {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}


if __name__ == "__main__":
    main()

"""Peak memory of one learner update and of one rollout prefill on a randomly initialised
Qwen2.5-0.5B-shaped model on CPU (the config is built here; nothing is downloaded).

    python bench/learner_memory.py [--layers 4] [--batch 4] [--seq 512] [--repeats 1]
                                   [--prefill-batch 8] [--prefill-seq 256]

* update, before: full-vocabulary fp32 logits at every position of the padded batch, then
  log-softmax (what the learner did before `LogprobModel`); after: the learner's own path,
  sequences packed without padding (`agents/packing.py`) and log-probs and entropy projected
  to the vocabulary only at action tokens, in checkpointed chunks. The rows have uneven
  lengths (seq, 3/4, 1/2, 1/4 of it, ...), the second half of each being action tokens.
* prefill, before: the prompts' forward with logits at every position (what the HF backend's
  prefill did); after: the same call asking for the last position only (`logits_to_keep=1`,
  as `HFPolicy` now does).

Each measurement is a fresh process (peak RSS, `VmHWM`), alternating before/after. Prints one
JSON line per phase: peaks, the peak above the loaded model (what the computation adds), and
the after/before ratios. Gradient checkpointing is on for the update, as it is for real
models, so the vocabulary projection is what dominates the difference.

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


def qwen_shaped(layers: int):
    """A Qwen2.5-0.5B-shaped config (its width, heads and 151,936-token vocabulary), random
    weights; `layers` of its 24."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=151936, hidden_size=896, intermediate_size=4864,
                         num_hidden_layers=layers, num_attention_heads=14, num_key_value_heads=2,
                         tie_word_embeddings=True, max_position_embeddings=4096)
    return Qwen2ForCausalLM(config)


def update_batch(batch: int, seq: int, vocab: int):
    """Uneven rows, right-padded; the second half of each row is action tokens."""
    import torch

    from envgym.agents.learner import TokenBatch

    lengths = [max(2, seq - (i % 4) * seq // 4) for i in range(batch)]
    ids = torch.randint(0, vocab, (batch, seq))
    real = torch.zeros(batch, seq, dtype=torch.long)
    mask = torch.zeros(batch, seq)
    for i, n in enumerate(lengths):
        real[i, :n] = 1
        mask[i, n // 2:n] = 1
    adv = torch.randn(batch, seq) * mask
    return TokenBatch(ids * real, real, mask, adv, torch.zeros(batch, seq))


def child(variant: str, layers: int, batch: int, seq: int) -> dict:
    import torch

    from envgym.agents.learner import LogprobModel, naive_token_logprobs, token_logprobs

    model = qwen_shaped(layers)
    phase, arm = variant.split("_")
    if phase == "prefill":
        model.eval()
        ids = torch.randint(0, model.config.vocab_size, (batch, seq))
        base = _rss_kb("VmRSS")
        with torch.no_grad():
            last = {} if arm == "before" else {"logits_to_keep": 1}
            out = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=True,
                        **last)
        return {"variant": variant, "peak_mb": _rss_kb("VmHWM") / 1024,
                "model_mb": base / 1024, "logits_shape": list(out.logits.shape)}
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    tb = update_batch(batch, seq, model.config.vocab_size)
    base = _rss_kb("VmRSS")
    if arm == "before":
        lp, ent = naive_token_logprobs(model, tb)
    else:
        lp, ent = token_logprobs(LogprobModel(model), tb, with_entropy=True, packed=True)
    mask, adv = tb.loss_mask, tb.advantages
    loss = -(lp * adv).sum() / mask.sum() - 0.01 * (ent * mask).sum() / mask.sum()
    loss.backward()
    return {"variant": variant, "peak_mb": _rss_kb("VmHWM") / 1024, "model_mb": base / 1024,
            "loss": float(loss)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--prefill-batch", type=int, default=8)
    ap.add_argument("--prefill-seq", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--child", default=None)
    args = ap.parse_args()
    if args.child:
        phase = args.child.split("_")[0]
        batch, seq = ((args.prefill_batch, args.prefill_seq) if phase == "prefill"
                      else (args.batch, args.seq))
        print(json.dumps(child(args.child, args.layers, batch, seq)))
        return
    shapes = {"update": (args.batch, args.seq), "prefill": (args.prefill_batch, args.prefill_seq)}
    for phase, (batch, seq) in shapes.items():
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(args.repeats):
            for arm in ("before", "after"):  # A B A B
                out = subprocess.run([sys.executable, __file__, "--child", f"{phase}_{arm}",
                                      "--layers", str(args.layers), "--batch", str(batch),
                                      "--seq", str(seq), "--prefill-batch", str(batch),
                                      "--prefill-seq", str(seq)],
                                     capture_output=True, text=True, check=True,
                                     env={"OMP_NUM_THREADS": "2", **_env()})
                runs[arm].append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(report(phase, args.layers, batch, seq, runs)), flush=True)


def report(phase: str, layers: int, batch: int, seq: int, runs: dict[str, list[dict]]) -> dict:
    peak = {v: max(r["peak_mb"] for r in rs) for v, rs in runs.items()}
    extra = {v: max(r["peak_mb"] - r["model_mb"] for r in rs) for v, rs in runs.items()}
    logits_gb = batch * seq * 151936 * 4 / 2**30
    out = {"bench": f"learner_memory_{phase}", "model": "qwen2.5-0.5b-shaped (random init)",
           "layers": layers, "batch": batch, "seq": seq,
           "full_vocab_fp32_logits_gb": round(logits_gb, 2),
           "peak_mb_before": round(peak["before"]), "peak_mb_after": round(peak["after"]),
           "peak_ratio_after_over_before": round(peak["after"] / peak["before"], 3),
           "extra_mb_before": round(extra["before"]), "extra_mb_after": round(extra["after"]),
           "extra_ratio_after_over_before": round(extra["after"] / extra["before"], 3)}
    if phase == "update":
        out.update(rows="uneven, action tokens = second half of each",
                   loss_before=runs["before"][0]["loss"], loss_after=runs["after"][0]["loss"])
    else:
        out.update(logits_shape_before=runs["before"][0]["logits_shape"],
                   logits_shape_after=runs["after"][0]["logits_shape"])
    return out


def _env() -> dict:
    import os
    return {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}


if __name__ == "__main__":
    main()

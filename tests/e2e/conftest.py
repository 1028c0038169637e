"""A very small model and a two-task config shared by the learner's end-to-end tests."""

from __future__ import annotations

from pathlib import Path

import pytest

ENV_KWARGS = ('{ series_length = 512, sketch_points = 4, zoom_points = 4, max_rounds = 1, '
              'tool_format = "tag" }')


@pytest.fixture(scope="session")
def small_model(tmp_path_factory) -> Path:
    from envgym.agents.tiny import build_tiny_model

    return Path(build_tiny_model(tmp_path_factory.mktemp("model") / "m", hidden_size=48,
                                 layers=1, include_envs=False))


def write_config(path: Path, model: Path, out: Path, *, steps: int = 4,
                 checkpoint_every: int = 1, extra: str = "") -> Path:
    path.write_text(f"""
seed = 3
output_dir = "{out}"
steps = {steps}
checkpoint_every = {checkpoint_every}
credit = ["grpo"]
[model]
policy = "{model}"
[[envs]]
id = "envgym/TimeSeries-v0"
kwargs = {ENV_KWARGS}
train_seeds = [0, 1000]
eval_seeds = [5000, 5002]
[rollout]
group_size = 2
tasks_per_step = 2
max_turns = 2
max_tokens = 6
eval_episodes = 2
deterministic = true
[optim]
lr = 1e-3
[log]
tensorboard = true
progress = false
{extra}
""")
    return path

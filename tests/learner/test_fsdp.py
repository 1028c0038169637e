"""FSDP2 (`fully_shard`) under `torchrun`: two gloo processes on CPU train the same weights as
DDP, and a run resumed from an FSDP checkpoint is bit-identical to the uninterrupted one
(every rank's minibatch shuffle is checkpointed: the ranks' generators drift apart)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from envgym.agents.tiny import build_tiny_model
    return build_tiny_model(tmp_path_factory.mktemp("m") / "m", hidden_size=48, layers=2,
                            include_envs=False)


def _config(path: Path, model: Path, out: Path, strategy: str) -> Path:
    path.write_text(f"""
seed = 3
output_dir = "{out}"
steps = 2
checkpoint_every = 1
credit = ["grpo"]
[model]
policy = "{model}"
strategy = "{strategy}"
[[envs]]
id = "envgym/TimeSeries-v0"
kwargs = {{ series_length = 512, sketch_points = 4, zoom_points = 4, max_rounds = 1, tool_format = "tag" }}
train_seeds = [0, 1000]
eval_seeds = [5000, 5002]
[rollout]
group_size = 2
tasks_per_step = 3
max_turns = 2
max_tokens = 6
eval_episodes = 2
deterministic = true
[ppo]
entropy_coef = 0.05
kl_coef = 0.1
[optim]
lr = 1e-2
grad_accum = 4   # rank 1 has 2 sequences: two empty micro-batches run the zero backward
[log]
tensorboard = false
progress = false
""")
    return path


def _torchrun(config: Path, *extra: str) -> None:
    from tests.conftest import free_port

    port = free_port()
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                           "--master_port", str(port), "-m", "envgym.agents.trainer", str(config),
                           *extra], env=ENV, capture_output=True, text=True, timeout=500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_fsdp_on_two_gloo_processes_matches_ddp_and_resumes_exactly(tmp_path, model_dir):
    pytest.importorskip("torch.distributed.fsdp")
    fsdp = _config(tmp_path / "fsdp.toml", model_dir, tmp_path / "fsdp", "fsdp")
    _torchrun(fsdp)
    ddp = _config(tmp_path / "ddp.toml", model_dir, tmp_path / "ddp", "ddp")
    _torchrun(ddp)
    a = load_file(tmp_path / "fsdp/final/model.safetensors")
    b = load_file(tmp_path / "ddp/final/model.safetensors")
    init = load_file(model_dir / "model.safetensors")
    assert a.keys() == b.keys()
    moved = sum(int((a[k] != init[k]).sum()) for k in init) / sum(v.numel() for v in init.values())
    assert moved > 0.9  # the update is real, not a no-op both strategies share
    for k in a:  # sharded gradients, reduced and applied, equal the replicated ones
        torch.testing.assert_close(a[k], b[k], atol=1e-5, rtol=1e-4)
    metrics = [json.loads(x) for x in (tmp_path / "fsdp/metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [0, 1, 2] and metrics[2]["kl"] > 0

    # resume from the step-1 FSDP checkpoint (gathered optimizer state, every rank's RNG):
    # the same run dir (the config digest covers it), cut back to step 1
    run = tmp_path / "fsdp"
    shutil.rmtree(run / "final")
    shutil.rmtree(run / "checkpoints/step_0000002")
    (run / "checkpoints/latest").write_text("step_0000001")
    lines = (run / "metrics.jsonl").read_text().splitlines()[:2]
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    _torchrun(fsdp, "--resume")
    c = load_file(run / "final/model.safetensors")
    assert all(torch.equal(a[k], c[k]) for k in a)  # bit for bit
    resumed_step = json.loads((run / "metrics.jsonl").read_text().splitlines()[2])
    assert resumed_step["loss"] == metrics[2]["loss"]
    assert resumed_step["entropy"] == metrics[2]["entropy"]


def test_fsdp_refuses_lora():
    from envgym.agents.config import load_config
    from envgym.errors import InvalidConfig

    with pytest.raises(InvalidConfig, match="fsdp"):
        load_config({"envs": [{"id": "envgym/TimeSeries-v0"}],
                     "model": {"strategy": "fsdp", "lora_rank": 4}})

"""`envgym train` end to end on CPU: metrics, kill-and-resume exactness, two gloo processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from safetensors.torch import load_file

from .conftest import write_config

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def _train(config: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "envgym.agents.trainer", str(config), *extra],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _steps(out: Path) -> list[int]:
    return [json.loads(x)["step"] for x in (out / "metrics.jsonl").read_text().splitlines()]


def test_killed_run_resumes_exactly(tmp_path, small_model):
    full = write_config(tmp_path / "full.toml", small_model, tmp_path / "full")
    assert _train(full).wait(timeout=300) == 0
    killed = write_config(tmp_path / "killed.toml", small_model, tmp_path / "killed")
    proc = _train(killed)
    deadline = time.time() + 300
    while not (tmp_path / "killed/checkpoints/step_0000002").exists():
        assert proc.poll() is None and time.time() < deadline, proc.stdout.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "killed/final").exists()
    resumed = _train(killed, "--resume")
    assert resumed.wait(timeout=300) == 0, resumed.stdout.read()
    assert _steps(tmp_path / "killed") == [0, 1, 2, 3, 4]  # no step lost or repeated
    # and bit-identical to the uninterrupted run
    a = load_file(tmp_path / "full/final/model.safetensors")
    b = load_file(tmp_path / "killed/final/model.safetensors")
    assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)
    records = [json.loads(x) for x in (tmp_path / "full/metrics.jsonl").read_text().splitlines()]
    for key in ("reward", "adv/std", "clip_frac", "entropy", "kl", "throughput/tokens_per_s",
                "credit/trajectories"):
        assert key in records[1]
    assert "eval/reward" in records[0] and "eval/reward" in records[-1]
    assert list((tmp_path / "full/tb").iterdir()), "TensorBoard events are written"


def test_resume_refuses_a_changed_config(tmp_path, small_model):
    cfg = write_config(tmp_path / "a.toml", small_model, tmp_path / "run", steps=1)
    assert _train(cfg).wait(timeout=300) == 0
    write_config(cfg, small_model, tmp_path / "run", steps=2, extra="[ppo]\nclip_low = 0.1")
    proc = _train(cfg, "--resume")
    assert proc.wait(timeout=300) != 0
    assert "config changed" in proc.stdout.read()


def test_two_gloo_processes_train_with_ddp(tmp_path, small_model):
    pytest.importorskip("torch.distributed.run")
    cfg = write_config(tmp_path / "ddp.toml", small_model, tmp_path / "ddp", steps=2,
                       checkpoint_every=0)
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                           "--master_port", "29533", "-m", "envgym.agents.trainer", str(cfg)],
                          env=ENV, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert _steps(tmp_path / "ddp") == [0, 1, 2]
    assert (tmp_path / "ddp/final/model.safetensors").exists()


def test_lora_trains_only_the_adapters(tmp_path, small_model):
    pytest.importorskip("peft", reason="the `lora` extra is not installed "
                        "(pip install 'envgym[lora]')")
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train

    cfg = load_config(write_config(tmp_path / "lora.toml", small_model, tmp_path / "lora",
                                   steps=1, checkpoint_every=0))
    cfg.model.policy, cfg.model.lora_rank = str(small_model), 2
    result = train(cfg)
    trainable = [n for n, p in result["model"].named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    assert (tmp_path / "lora/final/adapter_config.json").exists()


@pytest.mark.parametrize("chain, extra", [
    (["slate"], "branch_k = 2"),
    (["gigpo", "filter"], ""),
    (["hierarchical"], ""),
])
def test_one_step_with_each_base_estimator(tmp_path, small_model, chain, extra):
    from envgym.agents.config import load_config
    from envgym.agents.report import read_metrics
    from envgym.agents.trainer import train

    path = write_config(tmp_path / "c.toml", small_model, tmp_path / "run", steps=1,
                        checkpoint_every=0)
    text = path.read_text().replace('credit = ["grpo"]', f"credit = {chain!r}".replace("'", '"'))
    path.write_text(text.replace("deterministic = true", f"deterministic = true\n{extra}"))
    train(load_config(path), eval_at_start=False)
    step = read_metrics(tmp_path / "run/metrics.jsonl")[-1]
    assert step["step"] == 1
    if "filter" in chain:  # the untrained model's groups may all be dropped; all are counted
        assert step["filter/dropped_groups"] + step["filter/kept_groups"] == 2
    else:
        assert step["credit/trajectories"] > 0
    if chain == ["slate"]:  # SLATE trees: 2 tasks x 2 trees, 2 siblings at every step
        assert step["slate/trees"] == 4 and step["slate/siblings"] % 2 == 0
        assert step["turns"] > 0 and step["credit/trajectories"] == step["slate/siblings"] >= 8


def test_sft_command_trains_on_noisy_scripted_demos(tmp_path, small_model):
    from envgym.agents.report import read_metrics
    from envgym.agents.sft import main
    from envgym.trajectory import read_trajectories

    path = write_config(tmp_path / "sft.toml", small_model, tmp_path / "run",
                        extra='[sft]\nscripted = { oracle = 0.5, random = 0.5 }\n'
                              'episodes = 8\nepochs = 3\nbatch_size = 4\nlr = 5e-3')
    out = main(path)
    assert (out / "model.safetensors").exists()
    losses = [r["sft/loss"] for r in read_metrics(out / "metrics.jsonl")]
    assert len(losses) == 3 and losses[-1] < losses[0]
    demos = list(read_trajectories(tmp_path / "run/sft_data.jsonl"))
    policies = {t.info["policy"] for d in demos for t in d.turns}
    assert policies == {"oracle", "random"}  # the noise is really mixed in, turn by turn
    assert all(t.turns[0].action_token_ids for t in demos)

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
    from tests.conftest import free_port

    pytest.importorskip("torch.distributed.run")
    cfg = write_config(tmp_path / "ddp.toml", small_model, tmp_path / "ddp", steps=2,
                       checkpoint_every=0)
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                           "--master_port", str(free_port()), "-m", "envgym.agents.trainer", str(cfg)],
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


# ---- the run directory: refusing to mix runs, start-up checks, Ctrl-C ---------------------

def _quick(tmp_path, small_model, **kw):
    from envgym.agents.config import load_config

    kw.setdefault("steps", 1)
    kw.setdefault("checkpoint_every", 0)
    extra = kw.pop("extra", "")
    return load_config(write_config(tmp_path / "q.toml", small_model, tmp_path / "run",
                                    extra=extra, **kw))


def test_an_existing_run_needs_resume_or_overwrite(tmp_path, small_model):
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train
    from envgym.errors import InvalidConfig

    cfg = _quick(tmp_path, small_model)
    train(cfg, eval_at_start=False)
    with pytest.raises(InvalidConfig, match="already holds a run: pass --resume .* --overwrite"):
        train(cfg, eval_at_start=False)
    train(cfg, eval_at_start=False, overwrite=True)
    assert _steps(tmp_path / "run") == [1]  # replaced, not a second step 1 appended
    assert load_config(tmp_path / "run/train_config.json") == cfg  # the resolved config
    proc = subprocess.run([sys.executable, "-m", "envgym.agents.trainer",
                           str(tmp_path / "q.toml")], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "already holds a run" in proc.stderr


def test_resume_without_a_checkpoint_fails_before_the_sft(tmp_path, small_model, monkeypatch):
    import envgym.agents.sft as sft
    from envgym.agents.trainer import train
    from envgym.errors import InvalidConfig

    monkeypatch.setattr(sft, "run_sft", lambda cfg: pytest.fail("SFT ran before the check"))
    cfg = _quick(tmp_path, small_model, extra='[sft]\nepisodes = 2')
    cfg.model.warm_start = "sft"
    with pytest.raises(InvalidConfig, match="--resume: no checkpoint in"):
        train(cfg, resume=True)


def test_missing_wandb_is_a_clear_error(tmp_path, small_model, monkeypatch):
    import envgym.agents.runfiles as runfiles
    from envgym.agents.trainer import train
    from envgym.errors import InvalidConfig

    real = runfiles.importlib.util.find_spec
    monkeypatch.setattr(runfiles.importlib.util, "find_spec",
                        lambda name, *a: None if name == "wandb" else real(name, *a))
    cfg = _quick(tmp_path, small_model)
    cfg.log.wandb = True
    with pytest.raises(InvalidConfig, match="wandb = true, but wandb is not installed"):
        train(cfg)
    assert not (tmp_path / "run/metrics.jsonl").exists()


def test_sft_warm_start_is_keyed_by_its_settings(tmp_path, small_model, capsys):
    from envgym.agents.sft import warm_start

    cfg = _quick(tmp_path, small_model, extra="[sft]\nepisodes = 2\nepochs = 1\nbatch_size = 2")
    path = warm_start(cfg)
    built = (Path(path) / "model.safetensors").stat().st_mtime_ns
    assert warm_start(cfg) == path and "reusing" in capsys.readouterr().err
    assert (Path(path) / "model.safetensors").stat().st_mtime_ns == built
    cfg.rollout.temperature = 0.5  # an RL setting: the warm start stays valid
    warm_start(cfg)
    assert "reusing" in capsys.readouterr().err
    cfg.sft.epochs = 2
    warm_start(cfg)
    assert "is stale (changed: sft.epochs): rebuilding" in capsys.readouterr().err
    assert (Path(path) / "model.safetensors").stat().st_mtime_ns != built


def test_a_run_without_learning_signal_says_so(tmp_path, small_model, capsys):
    from envgym.agents.report import read_metrics
    from envgym.agents.runfiles import ZERO_SIGNAL_STEPS
    from envgym.agents.trainer import train

    cfg = _quick(tmp_path, small_model, steps=ZERO_SIGNAL_STEPS)
    cfg.optim.lr = 1e-9  # the untrained model fails every episode alike, and stays so
    train(cfg, eval_at_start=False)
    zero = [r["adv/zero_fraction"] for r in read_metrics(tmp_path / "run/metrics.jsonl")]
    assert zero == [1.0] * ZERO_SIGNAL_STEPS  # the premise: no group had any variance
    err = capsys.readouterr().err
    assert f"steps 1-{ZERO_SIGNAL_STEPS} had no learning signal" in err
    assert 'model.warm_start = "sft"' in err and "group_size >= 2" in err


def test_ctrl_c_saves_a_checkpoint_and_says_how_to_resume(tmp_path, small_model):
    cfg = write_config(tmp_path / "c.toml", small_model, tmp_path / "run", steps=40,
                       checkpoint_every=100)
    proc = _train(cfg)
    deadline = time.time() + 300
    while not (tmp_path / "run/metrics.jsonl").exists() or len(_steps(tmp_path / "run")) < 2:
        assert proc.poll() is None and time.time() < deadline, proc.stdout.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)  # during step 2 (or later): it finishes, then stops
    assert proc.wait(timeout=300) == 130
    out = proc.stdout.read()
    step = _steps(tmp_path / "run")[-1]
    assert f"stopped after step {step} of 40" in out and "--resume" in out, out
    assert (tmp_path / f"run/checkpoints/step_{step:07d}").is_dir()

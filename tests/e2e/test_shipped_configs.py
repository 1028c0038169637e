"""One training step of every shipped config on CPU, with 0 failed episodes.

GPU configs run as a scaled-down copy: the session's very small model on the hf backend in
fp32, one step, two tasks — the same environments, environment options and estimator
chain. About 15 s for all of them on 2 idle cores, so it runs in the default suite."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "agents" / "configs").glob("*.toml"))


def scaled(path: Path, model: Path, out: Path):
    """The config at `path`, scaled to one CPU step of the small model."""
    from envgym.agents.config import load_config

    cfg = load_config(path)
    cfg.output_dir, cfg.steps, cfg.checkpoint_every, cfg.eval_every = out, 1, 0, 0
    m = cfg.model
    m.policy, m.backend, m.dtype, m.device, m.warm_start = str(model), "hf", "float32", "cpu", "none"
    m.gradient_checkpointing, m.strategy, m.lora_rank = False, "auto", 0
    r = cfg.rollout
    r.tasks_per_step, r.eval_episodes, r.max_tokens = 2, 1, 8
    r.group_size = min(r.group_size, 2)
    r.reasoner_samples = min(r.reasoner_samples, 2)
    cfg.ppo.minibatches, cfg.optim.grad_accum = 1, 1
    cfg.log.tensorboard, cfg.log.wandb, cfg.log.progress = False, False, False
    return cfg


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_shipped_config_trains_one_step_without_failed_episodes(path, tmp_path, small_model):
    from envgym.agents.report import read_metrics
    from envgym.agents.trainer import train

    train(scaled(path, small_model, tmp_path / "run"), eval_at_start=False)
    step = read_metrics(tmp_path / "run/metrics.jsonl")[-1]
    assert step["step"] == 1 and step["rollout/failed"] == 0
    # `filter` may drop every zero-variance group of an untrained model; each is counted
    assert step["credit/trajectories"] > 0 or step["filter/dropped_groups"] > 0


# ---- IG and SLATE credit on a warm-started tiny model, through `envgym train` -------------

CONFIG_DIR = Path(__file__).resolve().parents[2] / "agents" / "configs"
SFT = '\n[sft]\nscripted = {mix}\nepisodes = 128\nepochs = 8\nbatch_size = {batch}\nlr = 5e-3\n'
NOISY = "{ oracle = 0.4, heuristic = 0.3, random = 0.3 }"


def warm_scaled(name: str, out: Path, tasks: int = 2, mix: str = NOISY, batch: int = 16) -> Path:
    """A shipped config with only sizes and the model changed: a tiny model warm-started by
    `envgym sft` on noisy scripted demonstrations (an untrained one writes no tags, so no
    search step would exist to credit), one step, and the per-step trajectory log on."""
    text = (CONFIG_DIR / name).read_text()
    edits = {r'policy = ".*"': 'policy = "tiny"\ntiny_hidden_size = 64\ntiny_layers = 2\n'
                               'warm_start = "sft"',
             r'backend = "vllm"': 'backend = "hf"', r'dtype = "bfloat16"': 'dtype = "float32"',
             r"gradient_checkpointing = true": "gradient_checkpointing = false",
             r'output_dir = ".*"': f'output_dir = "{out}"', r"\nsteps = \d+": "\nsteps = 1",
             r"eval_every = \d+": "eval_every = 0",
             r"checkpoint_every = \d+": "checkpoint_every = 0",
             r"tasks_per_step = \d+": f"tasks_per_step = {tasks}",
             r"max_tokens = \d+": "max_tokens = 48",
             r"eval_episodes = \d+": "eval_episodes = 1", r"minibatches = \d+": "minibatches = 1",
             r"grad_accum = \d+": "grad_accum = 1",
             r"tensorboard = true": "tensorboard = false\nprogress = false\ntrajectories = true"}
    for pattern, repl in edits.items():
        text, n = re.subn(pattern, repl, text)
        assert n == 1, f"{pattern!r} matched {n} times in {name}"
    path = out.parent / f"warm_{name}"
    path.write_text(text + SFT.format(mix=mix, batch=batch))
    return path


def envgym_train(path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "envgym.cli", "train", str(path)],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]


def query_span_advantages(run: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """(advantages on a query span's tokens, advantages on the rest of its turn) for every
    search step the trainer trained, read from the step log the trainer wrote after credit."""
    from transformers import AutoTokenizer

    from envgym.agents.credit.ig import span_token_mask
    from envgym.trajectory import read_trajectories

    logs = sorted((run / "trajectories").glob("step_*.jsonl"))
    assert logs, "no step log written"
    tokenizer = AutoTokenizer.from_pretrained(run / "trajectories" / "tokenizer")
    out = []
    for traj in (t for f in logs for t in read_trajectories(f)):
        credit = traj.meta["credit"]
        if credit is None:
            continue
        for turn, trained, adv in zip(traj.turns, credit["trained"], credit["advantages"],
                                      strict=True):
            for span in (s for s in turn.spans if s.kind == "query" and s.end > s.start
                         and trained):
                mask = span_token_mask(turn, span, tokenizer)
                a = np.asarray(adv)
                assert a.shape == mask.shape and mask.any()
                out.append((a[mask], a[~mask]))
    return out


def logged(run: Path, step: int) -> dict:
    """Everything logged at `step` (training metrics and the held-out evaluation)."""
    from envgym.agents.report import read_metrics

    rows = [r for r in read_metrics(run / "metrics.jsonl") if r.get("step") == step]
    assert rows, f"nothing logged at step {step}"
    return {k: v for r in rows for k, v in r.items()}


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_ig_config_credits_query_tokens_of_a_warm_started_model(tmp_path):
    """search_qwen05b.toml (grpo -> ig -> filter): the model's own searches get IG scored and
    their query tokens carry the IG bonus on top of the trajectory advantage."""
    # IG's bonus is a z-score over a group's searches: a group needs two with IG values (and
    # garbage queries all retrieve the same passages, leaving no other baseline block), so
    # the warm start is mostly the oracle's, in twice the updates, and 8 questions x 5
    envgym_train(warm_scaled("search_qwen05b.toml", tmp_path / "ig", tasks=8, batch=8,
                             mix="{ oracle = 0.8, heuristic = 0.1, random = 0.1 }"))
    row = logged(tmp_path / "ig", 1)
    assert row["ig/n_steps"] > 0 and row["ig/spans"] > 0 and row["ig/modulated_tokens"] > 0
    for key in ("ig/step_mean", "ig/logp_real_mean", "ig/logp_baseline_mean",
                "ig/bonus_abs_mean"):
        assert np.isfinite(row[key]) and row[key] != 0, (key, row[key])
    spans = query_span_advantages(tmp_path / "ig")
    assert spans and any(np.abs(q).max() > 0 for q, _ in spans)
    # the bonus is on the query only: some span's tokens differ from the rest of their turn
    assert any(rest.size and np.abs(q[:, None] - rest[None, :]).max() > 1e-6
               for q, rest in spans)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_slate_config_credits_search_steps_of_a_warm_started_model(tmp_path):
    """search_qwen15b_slate.toml: siblings of a search step sampled by the warm model differ
    in their judged reward, so search-step tokens carry Eq. 5's non-zero advantages."""
    envgym_train(warm_scaled("search_qwen15b_slate.toml", tmp_path / "slate"))
    row = logged(tmp_path / "slate", 1)
    assert row["slate/trees"] == 2 and row["adv/zero_fraction"] < 1
    assert row["slate/search_adv_abs_mean"] > 0
    spans = query_span_advantages(tmp_path / "slate")
    assert spans and any(np.abs(q).max() > 0 for q, _ in spans)
    for step in (0, 1):  # held out: EM with the forced answer, the judge's return beside it
        held_out = logged(tmp_path / "slate", step)
        assert 0 <= held_out["eval/Search-v0/reward"] <= 1, held_out["eval/Search-v0/reward"]
        assert "eval/Search-v0/judge_return" in held_out

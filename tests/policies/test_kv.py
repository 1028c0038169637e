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


def test_prefill_asks_the_model_for_the_last_positions_logits_only(tiny_dir):
    """Issue 35.11: every position's logits were computed and all but the last dropped;
    with a small cache every re-prefill did that over whole conversations."""
    for reuse in (True, False):
        policy = HFPolicy(str(tiny_dir), device="cpu", kv_reuse=reuse)
        widths = []
        hook = policy.model.register_forward_hook(
            lambda _m, _a, out: widths.append(out.logits.shape[1]))
        prompt = policy.chat.prompt_ids([{"role": "user", "content": "a long prompt " * 8}])
        policy.generate([prompt, prompt[:-3]], SamplingParams(max_tokens=4, seed=1))
        hook.remove()
        assert widths and set(widths) == {1}, widths


def _kept(policy):
    """Token positions whose KV the cache holds, each stored tensor counted once."""
    per_token = {e.nbytes // max(1, len(e.ids) - e.offset) for e in policy.kv.entries.values()
                 if len(e.ids) > e.offset}
    assert len(per_token) == 1
    return policy.kv.bytes // per_token.pop()


def test_a_group_keeps_one_copy_of_its_shared_prompt(tiny_dir, pair):
    """Issue 41: each of G members stored its own copy of the group prompt's KV."""
    on, off = pair
    on.clear_cache()
    messages = [{"role": "user", "content": "tell me a story " * 6}]
    prompt = on.chat.prompt_ids(messages)
    first = on.generate([prompt] * 4, SamplingParams(max_tokens=6, seed=1))
    fed = [len(c.token_ids) - 1 for c in first]
    assert _kept(on) == len(prompt) + sum(fed)  # not 4 * len(prompt) + sum(fed)
    nexts = []
    for c in first:  # each member's next turn still shares the first prompt's state
        obs, _ = on.chat.observation_ids(messages + [{"role": "assistant", "content": c.text}],
                                         [{"role": "user", "content": "go on"}],
                                         c.ended_with_eos)
        nexts.append(prompt + c.token_ids + obs)
    second = on.generate(nexts, SamplingParams(max_tokens=6, seed=2))
    want = off.generate(nexts, SamplingParams(max_tokens=6, seed=2))
    for got, ref in zip(second, want):
        assert got.token_ids == ref.token_ids
        assert np.allclose(got.logprobs, ref.logprobs, atol=1e-5, rtol=0)
    tails = sum(len(p) - len(prompt) + len(c.token_ids) - 1 for p, c in zip(nexts, second))
    assert _kept(on) == len(prompt) + tails
    for p, c in zip(nexts, second):  # episodes end: everything goes, shared part last
        on.release(p + c.token_ids)
    assert len(on.kv) == 0 and on.kv.bytes == 0


def test_a_released_group_prompt_stays_while_a_member_reads_it(tiny_dir):
    from envgym.agents.policies.kv import KVEntry, PrefixCache
    t = lambda n: [torch.zeros(1, n, 2)]  # noqa: E731 - one layer, [heads, tokens, dim]
    cache = PrefixCache(10_000)
    shared = KVEntry([1, 2, 3], t(3), t(3))
    cache.store(shared)
    a, b = KVEntry([1, 2, 3, 4], t(1), t(1), shared), KVEntry([1, 2, 3, 5], t(1), t(1), shared)
    cache.store(a)
    cache.store(b)
    assert cache.bytes == (3 + 1 + 1) * 2 * 8
    cache.release([1, 2, 3, 4])  # member a ends: its entry and the (unindexed) prompt
    assert cache.lookup([1, 2, 3, 5, 9])[0] is b and cache.bytes == (3 + 1) * 2 * 8
    k, v = torch.empty(1, 4, 2), torch.empty(1, 4, 2)
    b.write_prefix(0, 4, k, v)  # b still reads the shared prompt
    cache.release([1, 2, 3, 5])
    assert cache.bytes == 0 and len(cache) == 0


class _AnsweringController:
    """The tiny model never answers, so an ARTIST head never forks. This wrapper writes the
    controller's turns (rows at the controller's temperature) from a script that zooms once,
    accepts and answers; the reasoner's rows (the forks) are the real policy's samples."""

    per_row_sampling = True

    def __init__(self, inner, controller_t: float):
        self.inner, self.controller_t = inner, controller_t
        self.name, self.chat = f"answering:{inner.name}", inner.chat
        self.tokenizer = inner.tokenizer
        self.forked_rows = 0

    def generate(self, prompts, sampling):
        from envgym.policy import Completion, row_sampling
        rows = row_sampling(sampling, len(prompts))
        real = [i for i, r in enumerate(rows) if r.temperature != self.controller_t]
        out = dict(zip(real, self.inner.generate([prompts[i] for i in real],
                                                 [rows[i] for i in real]) if real else []))
        self.forked_rows += len(real)
        for i, (p, r) in enumerate(zip(prompts, rows)):
            if i not in out:
                ids = self.chat.encode(self._script(self.chat.decode(p)))
                (lps,) = self.inner.score_ids([(list(p), ids)], r.temperature)
                out[i] = Completion(self.chat.decode(ids), ids, lps, "stop", False)
        return [out[i] for i in range(len(prompts))]

    @staticmethod
    def _script(prompt: str) -> str:
        last = prompt.rsplit("<|im_start|>", 2)[-2]
        if "Zooming stopped" in last or "Now answer" in last:
            return "<think>the values</think><answer>A</answer>"
        if "<|im_start|>tool" not in prompt:
            return "<think>look</think><zoom>[10, 60]</zoom>"
        return "<think>enough</think><answer>ACCEPT</answer>"

    def release(self, ids):
        self.inner.release(ids)


def test_artist_forks_of_answered_heads_equal_a_full_recompute(pair):
    """Issue 35.11: the ARTIST KV test above never forks (its heads never answer)."""
    from envgym.hierarchy import collect_hierarchical
    from envgym.runstate import RunState
    on, off = pair
    runs, prefilled = [], []
    for p in (on, off):
        p.prefill_tokens = 0
        policy = _AnsweringController(p, 1.0)
        runs.append(collect_hierarchical(
            "envgym/TimeSeries-v0", policy, episodes=1, controllers=2, samples=3,
            env_kwargs={"max_turns": 6, "tool_format": "tag", "series_length": 512,
                        "max_rounds": 2}, run=RunState(), controller_temperature=1.0,
            reasoner_temperature=0.7, sampling=SamplingParams(max_tokens=10, seed=6)))
        prefilled.append(p.prefill_tokens)
        assert policy.forked_rows >= 4  # both heads answered and forked
    assert [t.meta["sample"] for t in runs[0]].count(0) == 2
    assert_same(*runs)
    assert len(runs[0]) == 2 * 3
    prefixes = {tuple(i for x in t.turns[:-1] for i in x.obs_token_ids + x.action_token_ids)
                + tuple(t.turns[-1].obs_token_ids) for t in runs[0]}
    # each distinct head prefix is prefilled once for all of its forks (the heads' own
    # entries were released when their episodes ended: see the HF module docstring)
    assert prefilled[0] == sum(map(len, prefixes))
    assert prefilled[1] > prefilled[0]

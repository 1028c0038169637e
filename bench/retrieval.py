"""Retrieval benchmark: our BM25 retriever next to raw bm25s; prints one JSON line each.

    python bench/retrieval.py [--scale 38] [--queries 200] [--dense-docs 10000]

Same corpus (the generated world, > 100k passages at scale 38), same bm25s index, same
query strings on both sides:

* `bm25_single`: per query, alternating ours / raw (A B A B, order swapped every query).
  Raw bm25s = `bm25s.tokenize(q, return_ids=False)` then `BM25.retrieve(tokens, k)`. Ours =
  `BM25Retriever.search([q], k)`: its tokenisation (`tokenize`), scoring (`top_ids`) and
  result building (`Hit`s) timed apart. Goals: ours/raw <= 1.3; tokenisation <= half of
  our single-query time.
* `bm25_batched`: all queries in one call, ours vs raw (tokenise + retrieve), alternating.
  Goal: ours >= 400 QPS.
* `retrieve_http_8_clients`: `/retrieve` (the micro-batching server) in its own process,
  8 client threads here, one query per request. Goal: >= 300 QPS.
* `rank_bm25_single` (when installed) and `dense_flat_*` for reference.

Every line carries `ok` against its goal; nothing is hidden when we are slower.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np


def emit(**record) -> None:
    print(json.dumps(record), flush=True)


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 4)


def bench_single(ours, queries: list[str], k: int = 3) -> None:
    import bm25s

    from envgym.environments.search.retrievers import Hit

    raw_tok, raw_ret, raw_all = [], [], []
    our_tok, our_ret, our_res, our_all = [], [], [], []

    def raw(q):
        t0 = time.perf_counter()
        tokens = bm25s.tokenize([q], stopwords="en", return_ids=False, show_progress=False)
        t1 = time.perf_counter()
        ours.model.retrieve(tokens, k=k, show_progress=False, n_threads=0)
        t2 = time.perf_counter()
        raw_tok.append(t1 - t0), raw_ret.append(t2 - t1), raw_all.append(t2 - t0)

    def mine(q):
        t0 = time.perf_counter()
        ids = ours.tokenize([q])[0]
        t1 = time.perf_counter()
        top = ours.top_ids(ids, k)
        t2 = time.perf_counter()
        [Hit(ours.docs[i], s) for i, s in top]
        t3 = time.perf_counter()
        our_tok.append(t1 - t0), our_ret.append(t2 - t1), our_res.append(t3 - t2)
        our_all.append(t3 - t0)

    for i, q in enumerate(queries):
        for fn in ((mine, raw) if i % 2 == 0 else (raw, mine)):
            fn(q)
    # The split must add up to the real call: time search() end to end as well.
    whole = []
    for q in queries:
        t = time.perf_counter()
        ours.search([q], k)
        whole.append(time.perf_counter() - t)
    ratio = statistics.median(our_all) / statistics.median(raw_all)
    share = statistics.median(our_tok) / statistics.median(our_all)
    emit(bench="bm25_single", n=len(queries), k=k,
         ours_ms=_ms(our_all), ours_search_call_ms=_ms(whole), ours_tokenize_ms=_ms(our_tok),
         ours_retrieve_ms=_ms(our_ret), ours_results_ms=_ms(our_res),
         raw_bm25s_ms=_ms(raw_all), raw_tokenize_ms=_ms(raw_tok), raw_retrieve_ms=_ms(raw_ret),
         ratio_ours_over_raw=round(ratio, 3), ok_ratio=ratio <= 1.3,
         tokenize_share=round(share, 3), ok_tokenize_share=share <= 0.5)


def bench_batched(ours, queries: list[str], k: int = 3, repeats: int = 3) -> None:
    import bm25s

    ours_s, raw_s = [], []
    for _ in range(repeats):  # A B A B
        t = time.perf_counter()
        ours.search(queries, k)
        ours_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        tokens = bm25s.tokenize(queries, stopwords="en", return_ids=False, show_progress=False)
        ours.model.retrieve(tokens, k=k, show_progress=False, n_threads=0)
        raw_s.append(time.perf_counter() - t)
    qps, raw_qps = len(queries) / min(ours_s), len(queries) / min(raw_s)
    emit(bench="bm25_batched", n=len(queries), ours_qps=round(qps, 1), raw_bm25s_qps=round(raw_qps, 1),
         ratio_ours_over_raw=round(qps / raw_qps, 2), ok=qps >= 400)


_SERVER = """
import sys
from envgym.environments.search.http import serve
from envgym.environments.search.retrievers import load_retriever
serve(load_retriever(sys.argv[1]), port=int(sys.argv[2]))
"""


def bench_server(ours, queries: list[str], clients: int = 8, rounds: int = 2) -> None:
    """The server in its own process (as `envgym serve-retriever` runs), clients here."""
    import httpx

    with tempfile.TemporaryDirectory() as tmp:
        ours.save(tmp)
        port = _free_port()
        proc = subprocess.Popen([sys.executable, "-c", _SERVER, tmp, str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_ready(url, proc)
            _drive(f"{url}/retrieve", queries[:clients * 4], clients)  # warm up
            before = httpx.get(f"{url}/health").json()
            cpu0, mine0 = _cpu_s(proc.pid), time.process_time()
            elapsed = min(_drive(f"{url}/retrieve", queries, clients) for _ in range(rounds))
            cpu1, mine1 = _cpu_s(proc.pid), time.process_time()
            after = httpx.get(f"{url}/health").json()
        finally:
            proc.terminate()
            proc.wait(10)
    calls = after["batches"] - before["batches"]
    served = after["queries"] - before["queries"]
    qps = len(queries) / elapsed
    # CPU per request on each side: on a busy machine QPS falls with the CPU share we get,
    # while these stay put (capacity of one server core ~ 1000 / server_cpu_ms).
    emit(bench="retrieve_http_8_clients", qps=round(qps, 1), n=len(queries), clients=clients,
         mean_batch=round(served / max(calls, 1), 2),
         server_cpu_ms_per_request=round((cpu1 - cpu0) / served * 1000, 3),
         client_cpu_ms_per_request=round((mine1 - mine0) / served * 1000, 3),
         cores=len(os.sched_getaffinity(0)), load_avg_1m=round(os.getloadavg()[0], 1),
         ok=qps >= 300)


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")


def _drive(url: str, queries: list[str], clients: int) -> float:
    import httpx

    errors: list[str] = []

    def client(i):
        with httpx.Client() as c:
            for q in queries[i::clients]:
                r = c.post(url, json={"queries": [q], "topk": 3, "return_scores": True})
                if r.status_code != 200:
                    errors.append(r.text[:200])

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise RuntimeError(f"/retrieve failed: {errors[0]}")
    return time.perf_counter() - t


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(url: str, proc: subprocess.Popen, timeout: float = 300.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {proc.stderr.read().decode()[-500:]}")
        try:
            httpx.get(f"{url}/health", timeout=1.0)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError("the server did not start in time")


def bench_rank_bm25(corpus, queries, ours) -> None:
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        emit(bench="rank_bm25_single", skipped="rank_bm25 is not installed")
        return
    import bm25s

    t = time.perf_counter()
    tokenized = bm25s.tokenize([d["contents"] for d in corpus], stopwords="en", return_ids=False,
                               show_progress=False)
    model = BM25Okapi(tokenized)
    build = time.perf_counter() - t
    q_tokens = bm25s.tokenize(queries, stopwords="en", return_ids=False, show_progress=False)
    t = time.perf_counter()
    for q in q_tokens:
        model.get_top_n(q, corpus, n=3)
    qps = len(queries) / (time.perf_counter() - t)
    t = time.perf_counter()
    for q in queries:
        ours.search([q], 3)
    ours_qps = len(queries) / (time.perf_counter() - t)
    emit(bench="rank_bm25_single", qps=round(qps, 2), build_s=round(build, 1), n=len(queries),
         ours_speedup=round(ours_qps / qps, 1))


def bench_dense(corpus, queries, n_docs: int) -> None:
    from envgym.environments.search.retrievers import DenseRetriever

    t = time.perf_counter()
    dense = DenseRetriever.from_documents(corpus[:n_docs], index="flat")
    emit(bench="dense_build", passages=n_docs, seconds=round(time.perf_counter() - t, 1))
    lat = []
    for q in queries:
        t = time.perf_counter()
        dense.search([q], 3)
        lat.append(time.perf_counter() - t)
    emit(bench="dense_flat_single", qps=round(len(lat) / sum(lat), 1), median_ms=_ms(lat))
    t = time.perf_counter()
    dense.search(queries, 3)
    emit(bench="dense_flat_batched", qps=round(len(queries) / (time.perf_counter() - t), 1))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--scale", type=float, default=38.0, help="world scale; 38 gives > 100k passages")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--dense-docs", type=int, default=10_000,
                   help="passages to embed for the dense bench (0 skips it)")
    p.add_argument("--rank-bm25-queries", type=int, default=20, help="0 skips rank_bm25")
    args = p.parse_args()

    from envgym.environments.search.retrievers import BM25Retriever
    from envgym.environments.search.world import generate_world

    t = time.perf_counter()
    world = generate_world(0, scale=args.scale, n_questions=args.queries)
    corpus, queries = world.corpus, [q.question for q in world.questions]
    emit(bench="generate_world", passages=len(corpus), seconds=round(time.perf_counter() - t, 1))
    t = time.perf_counter()
    bm25 = BM25Retriever.from_documents(corpus)
    emit(bench="bm25_build", passages=len(corpus), seconds=round(time.perf_counter() - t, 1))
    _check_same_scores(bm25, queries[:20])
    bench_single(bm25, queries)
    bench_batched(bm25, queries)
    bench_server(bm25, queries)
    if args.rank_bm25_queries > 0:
        bench_rank_bm25(corpus, queries[:args.rank_bm25_queries], bm25)
    if args.dense_docs > 0:
        bench_dense(corpus, queries, args.dense_docs)


def _check_same_scores(ours, queries: list[str], k: int = 3) -> None:
    """A speed comparison means nothing if the answers differ: same top-k scores as bm25s."""
    import bm25s

    for q in queries:
        tokens = bm25s.tokenize([q], stopwords="en", return_ids=False, show_progress=False)
        _, raw = ours.model.retrieve(tokens, k=k, show_progress=False, n_threads=0)
        mine = [h.score for h in ours.search([q], k)[0]]
        if not np.allclose(sorted(mine, reverse=True), sorted(raw[0], reverse=True), atol=1e-5):
            raise SystemExit(f"ours and bm25s disagree on {q!r}: {mine} vs {list(raw[0])}")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()

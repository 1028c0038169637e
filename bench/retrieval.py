"""Retrieval benchmark: prints one JSON line per measurement.

    python bench/retrieval.py [--scale 38] [--queries 200] [--dense-docs 10000]

On a generated corpus of >= 100k passages: BM25 (bm25s) and dense (faiss + MiniLM) queries per
second, single and batched; `/retrieve` throughput with 8 concurrent clients; and the speed
ratio of bm25s against `rank_bm25` on the same corpus and queries.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time


def emit(**record) -> None:
    print(json.dumps(record), flush=True)


def timed_single(search, queries):
    lat = []
    for q in queries:
        t = time.perf_counter()
        search([q])
        lat.append(time.perf_counter() - t)
    return len(queries) / sum(lat), statistics.median(lat) * 1000


def bench_retriever(name, retriever, queries, topk=3):
    qps, median_ms = timed_single(lambda q: retriever.search(q, topk), queries)
    emit(bench=f"{name}_single", qps=round(qps, 1), median_ms=round(median_ms, 3), n=len(queries))
    t = time.perf_counter()
    retriever.search(queries, topk)
    emit(bench=f"{name}_batched", qps=round(len(queries) / (time.perf_counter() - t), 1), n=len(queries))
    return qps


def bench_server(retriever, queries, clients=8):
    import httpx
    import uvicorn

    from envgym.environments.search.http import create_app

    server = uvicorn.Server(uvicorn.Config(create_app(retriever), host="127.0.0.1", port=0,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}/retrieve"

    def client(i):
        with httpx.Client() as c:
            for q in queries[i::clients]:
                c.post(url, json={"queries": [q], "topk": 3, "return_scores": True}).raise_for_status()

    t = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    elapsed = time.perf_counter() - t
    server.should_exit = True
    thread.join(10)
    emit(bench="retrieve_http_8_clients", qps=round(len(queries) / elapsed, 1), n=len(queries),
         clients=clients)


def bench_rank_bm25(corpus, queries, bm25s_qps):
    import bm25s
    from rank_bm25 import BM25Okapi

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
    emit(bench="rank_bm25_single", qps=round(qps, 2), build_s=round(build, 1), n=len(queries),
         bm25s_speedup=round(bm25s_qps / qps, 1))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--scale", type=float, default=38.0, help="world scale; 38 gives > 100k passages")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--dense-docs", type=int, default=10_000,
                   help="passages to embed for the dense bench (CPU encoding of 100k takes long)")
    p.add_argument("--rank-bm25-queries", type=int, default=20)
    args = p.parse_args()

    from envgym.environments.search.retrievers import BM25Retriever, DenseRetriever
    from envgym.environments.search.world import generate_world

    t = time.perf_counter()
    world = generate_world(0, scale=args.scale, n_questions=args.queries)
    corpus, queries = world.corpus, [q.question for q in world.questions]
    emit(bench="generate_world", passages=len(corpus), seconds=round(time.perf_counter() - t, 1))
    t = time.perf_counter()
    bm25 = BM25Retriever.from_documents(corpus)
    emit(bench="bm25_build", passages=len(corpus), seconds=round(time.perf_counter() - t, 1))
    bm25_qps = bench_retriever("bm25", bm25, queries)
    bench_server(bm25, queries)
    bench_rank_bm25(corpus, queries[:args.rank_bm25_queries], bm25_qps)
    if args.dense_docs > 0:
        t = time.perf_counter()
        dense = DenseRetriever.from_documents(corpus[:args.dense_docs], index="flat")
        emit(bench="dense_build", passages=args.dense_docs, seconds=round(time.perf_counter() - t, 1))
        bench_retriever("dense_flat", dense, queries)


if __name__ == "__main__":
    main()

"""Load on the three servers, each run as its CLI in a child process on loopback.

    python bench/servers.py [--rounds 2] [--clients 32] [--only policy,retriever,env]

Prints one JSON line per measurement: concurrency, p50/p99 latency (ms), wall seconds and
the server's RSS (MB). Comparisons run A B A B (`--rounds`) so a drifting shared machine
shows up as spread rather than as a difference:

* `policy/temperatures`: `clients` requests at once, all with one temperature (A) or each
  with its own (B). Goal: B within 2x of A (per-row sampling shares the batch).
* `policy/short_under_long`: short requests alone (A) and while a 4000-token greedy
  request decodes (B). Goal: B's p99 within a few chunks of A's, not the long one's length.
* `retriever`: `clients` x 20 single-query requests; then the same while one client sends a
  `--max-queries`-sized batch.
* `env`: `clients` concurrent TimeSeries-v0 sessions, reset and 3 steps each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.server_process import ServerProcess  # noqa: E402


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] * 1000


def _emit(server: ServerProcess, **fields) -> None:
    fields["rss_mb"] = round(_rss_mb(server.proc.pid), 1)
    print(json.dumps(fields), flush=True)


def _concurrent(fn, n: int) -> tuple[list[float], float, int]:
    """Run fn(i) in n threads at once; (latencies, wall seconds, errors)."""
    latencies: list[float] = []
    errors = [0]
    barrier = threading.Barrier(n)

    def one(i: int) -> None:
        barrier.wait()
        start = time.monotonic()
        try:
            fn(i)
            latencies.append(time.monotonic() - start)
        except Exception:  # noqa: BLE001 - counted
            errors[0] += 1
    start = time.monotonic()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, time.monotonic() - start, errors[0]


def bench_policy(args, tmp: Path) -> None:
    from envgym.agents.tiny import build_tiny_model

    model = build_tiny_model(tmp / "tiny", include_envs=False)
    server = ServerProcess(["serve-policy", f"hf:{model}"], tmp / "policy.log")
    url = f"{server.url}/v1/completions"
    pool = httpx.Client(timeout=120, limits=httpx.Limits(max_connections=args.clients + 4))
    try:
        def request(temperature: float, max_tokens: int = 16, timeout: float = 120) -> None:
            r = pool.post(url, timeout=timeout, json={
                "prompt": "The answer is", "max_tokens": max_tokens, "temperature": temperature})
            r.raise_for_status()
        request(1.0)  # warm-up
        for rnd in range(args.rounds):
            for setting in ("equal", "distinct"):
                temp = (lambda i: 0.7) if setting == "equal" else (lambda i: 0.2 + i / 20)
                lat, wall, err = _concurrent(lambda i: request(temp(i)), args.clients)
                _emit(server, bench="policy/temperatures", setting=setting, round=rnd,
                      concurrency=args.clients, p50_ms=round(_pct(lat, .5), 1),
                      p99_ms=round(_pct(lat, .99), 1), wall_s=round(wall, 3), errors=err)
        for rnd in range(args.rounds):
            for setting in ("alone", "beside_long"):
                long = None
                if setting == "beside_long":
                    long = threading.Thread(target=lambda: _quiet(
                        lambda: request(0, max_tokens=4000, timeout=8)))
                    long.start()
                    time.sleep(0.5)
                lat = []
                for _ in range(8):
                    start = time.monotonic()
                    request(0.7, max_tokens=8)
                    lat.append(time.monotonic() - start)
                _emit(server, bench="policy/short_under_long", setting=setting, round=rnd,
                      concurrency=1 if long is None else 2, p50_ms=round(_pct(lat, .5), 1),
                      p99_ms=round(_pct(lat, .99), 1))
                if long is not None:
                    long.join()
    finally:
        code, seconds = server.terminate(30)
        print(json.dumps({"bench": "policy/sigterm", "exit": code, "seconds": round(seconds, 2)}))


def _quiet(fn) -> None:
    try:
        fn()
    except httpx.HTTPError:
        pass  # the long request's client gives up: that is its disconnect


def bench_retriever(args, tmp: Path) -> None:
    from envgym.environments.search.retrievers import BM25Retriever, Document

    docs = [Document(str(i), f"passage {i} about topic {i % 97} and item {i * 7 % 1009}")
            for i in range(20000)]
    BM25Retriever.from_documents(docs).save(tmp / "index")
    server = ServerProcess(["serve-retriever", "--index", str(tmp / "index"),
                            "--max-queries", "1024"], tmp / "retriever.log")
    url = f"{server.url}/retrieve"
    try:
        def client(i: int) -> None:
            with httpx.Client(timeout=60) as c:
                for j in range(20):
                    c.post(url, json={"queries": [f"topic {(i * 20 + j) % 97}"]}
                           ).raise_for_status()
        for rnd in range(args.rounds):
            for setting in ("alone", "beside_max_batch"):
                big = None
                if setting == "beside_max_batch":
                    big = threading.Thread(target=lambda: httpx.post(url, timeout=120, json={
                        "queries": [f"item {k}" for k in range(1024)]}))
                    big.start()
                lat, wall, err = _concurrent(client, args.clients)
                if big is not None:
                    big.join()
                _emit(server, bench="retriever", setting=setting, round=rnd,
                      concurrency=args.clients, request_p50_ms=round(_pct(lat, .5) / 20, 2),
                      request_p99_ms=round(_pct(lat, .99) / 20, 2),  # a client mean
                      qps=round(args.clients * 20 / wall, 1), errors=err)
    finally:
        code, seconds = server.terminate(30)
        print(json.dumps({"bench": "retriever/sigterm", "exit": code,
                          "seconds": round(seconds, 2)}))


def bench_env(args, tmp: Path) -> None:
    from websockets.sync.client import connect

    server = ServerProcess(["serve-env", "envgym/TimeSeries-v0", "--max-sessions",
                            str(args.clients)], tmp / "env.log")
    ws_url = server.url.replace("http", "ws") + "/ws"
    resets: list[float] = []
    steps: list[float] = []

    def session(i: int) -> None:
        with connect(ws_url, max_size=None) as ws:
            start = time.monotonic()
            ws.send(json.dumps({"type": "reset", "data": {"seed": i}}))
            ws.recv(timeout=120)
            resets.append(time.monotonic() - start)
            for _ in range(3):
                start = time.monotonic()
                ws.send(json.dumps({"type": "step", "data": {"content": "no tool call"}}))
                ws.recv(timeout=120)
                steps.append(time.monotonic() - start)
    try:
        for rnd in range(args.rounds):
            resets.clear()
            steps.clear()
            _, wall, err = _concurrent(session, args.clients)
            _emit(server, bench="env", round=rnd, concurrency=args.clients,
                  reset_p50_ms=round(_pct(resets, .5), 1), reset_p99_ms=round(_pct(resets, .99), 1),
                  step_p50_ms=round(_pct(steps, .5), 1), step_p99_ms=round(_pct(steps, .99), 1),
                  wall_s=round(wall, 2), errors=err)
        health = httpx.get(f"{server.url}/health").json()
        print(json.dumps({"bench": "env/health_after", **health}))
    finally:
        code, seconds = server.terminate(30)
        print(json.dumps({"bench": "env/sigterm", "exit": code, "seconds": round(seconds, 2)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--only", default="policy,retriever,env")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only.split(","):
            {"policy": bench_policy, "retriever": bench_retriever, "env": bench_env}[name](
                args, Path(tmp))


if __name__ == "__main__":
    main()

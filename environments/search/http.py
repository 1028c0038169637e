"""The Search-R1-compatible retrieval server and its httpx client.

`POST /retrieve` takes `{"queries": [...], "topk": k, "return_scores": bool}` (or a single
`"query"`, SkyRL style) and answers `{"result": [[{"document": {"id", "contents"}, "score"}]]}`,
one list per query in request order, for any batch size and either `return_scores` (the
Search-R1 server's unpack bug, infra §B.4.1, is the reason for the fixed response shape).
Concurrent requests are merged into batched `search` calls (requests that arrive while a
search runs go together in the next one, each with a fair share of it), because
per-trajectory clients send one query at a time and batched retrieval is far faster (§B.5).
A request's size is bounded: `max_queries` queries of `max_query_chars` characters each,
with a 413 naming the limit beyond either.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, model_validator

from envgym.environments.search.retrievers import MAX_QUERY_CHARS, Document, Hit, Retriever
from envgym.errors import RetrieverUnavailable

__all__ = ["HTTPRetriever", "RetrieveRequest", "create_app", "serve"]


class RetrieveRequest(BaseModel):
    queries: list[str] | None = None
    query: str | None = None
    topk: int | None = Field(default=None, ge=1, le=1000)
    return_scores: bool = False

    @model_validator(mode="after")
    def _one_form(self) -> RetrieveRequest:
        if (self.queries is None) == (self.query is None):
            raise ValueError('give exactly one of "queries" (a list of strings) or "query" (a string)')
        return self

    def as_list(self) -> list[str]:
        return self.queries if self.queries is not None else [self.query or ""]


@dataclass(eq=False)
class _Job:
    """One request's queries; `done` of them answered so far."""

    queries: list[str]
    topk: int
    future: asyncio.Future
    hits: list[list[Hit]] = field(default_factory=list)

    @property
    def left(self) -> int:
        return len(self.queries) - len(self.hits)


class _Batcher:
    """Merges concurrent requests into batched `search` calls (micro-batching), fairly.

    One search runs at a time, of at most `max_batch` queries. Requests that arrive while it
    runs wait for the next call, which takes queries from every waiting request in turn
    (round robin, an equal share each), so a lone query never waits behind another client's
    whole 1,024-query batch, only behind one call of `max_batch`. A lone client pays no
    wait. `window_s` > 0 additionally waits that long for company after the first request
    of a batch (useful only when a batch is much cheaper per query than single searches and
    clients are few)."""

    def __init__(self, retriever: Retriever, max_batch: int = 64, window_s: float = 0.0):
        self.retriever, self.max_batch, self.window_s = retriever, max(1, max_batch), window_s
        self.queue: asyncio.Queue = asyncio.Queue()
        self.pending: deque[_Job] = deque()
        self.lock = threading.Lock()  # faiss/bm25 objects are not assumed thread-safe
        self.calls = self.served = 0  # search calls made and queries answered, for /health
        self.batches: deque[int] = deque(maxlen=1024)  # sizes of the latest search calls

    async def submit(self, queries: list[str], topk: int) -> list[list[Hit]]:
        future = asyncio.get_running_loop().create_future()
        await self.queue.put(_Job(list(queries), topk, future))
        return await future

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self.pending:
                self.pending.append(await self.queue.get())
                deadline = loop.time() + self.window_s
                while sum(j.left for j in self.pending) < self.max_batch:
                    left = deadline - loop.time()
                    if left <= 0 or not self.queue.empty():
                        break
                    try:
                        self.pending.append(await asyncio.wait_for(self.queue.get(), left))
                    except asyncio.TimeoutError:
                        break
            while not self.queue.empty():  # arrived while the last search ran
                self.pending.append(self.queue.get_nowait())
            await self._serve(self._take())

    def _take(self) -> list[tuple[_Job, int]]:
        """(job, how many of its next queries) for one call: an equal share per waiting
        request, the spare room to the earliest; finished or abandoned jobs drop out."""
        jobs = [j for j in self.pending if not j.future.done()]
        self.pending = deque(jobs)
        plan: dict[int, int] = {}
        room = self.max_batch
        while room and any(j.left > plan.get(id(j), 0) for j in jobs):
            share = max(1, room // sum(j.left > plan.get(id(j), 0) for j in jobs))
            for j in jobs:
                n = min(share, j.left - plan.get(id(j), 0), room)
                if n > 0:
                    plan[id(j)] = plan.get(id(j), 0) + n
                    room -= n
        return [(j, plan[id(j)]) for j in jobs if plan.get(id(j))]

    async def _serve(self, plan: list[tuple[_Job, int]]) -> None:
        queries = [q for job, n in plan for q in job.queries[len(job.hits):len(job.hits) + n]]
        k = max((job.topk for job, _ in plan), default=1)
        try:
            results = await asyncio.to_thread(self._search, queries, k)
        except Exception as e:
            for job, _ in plan:
                if not job.future.done():
                    job.future.set_exception(e)
            return
        pos = 0
        for job, n in plan:
            job.hits += [hits[:job.topk] for hits in results[pos:pos + n]]
            pos += n
            if not job.left and not job.future.done():  # the client may have gone away
                job.future.set_result(job.hits)
        # round robin: those served go behind any that were not
        served = {id(job) for job, _ in plan}
        rest = [j for j in self.pending if j.left and not j.future.done()]
        self.pending = deque([j for j in rest if id(j) not in served]
                             + [j for j in rest if id(j) in served])

    def _search(self, queries: list[str], k: int) -> list[list[Hit]]:
        with self.lock:
            self.calls += 1
            self.served += len(queries)
            self.batches.append(len(queries))
            return self.retriever.search(queries, k) if queries else []


def create_app(retriever: Retriever, *, default_topk: int = 3, max_batch: int = 64,
               window_s: float = 0.0, max_queries: int = 1024,
               max_query_chars: int = MAX_QUERY_CHARS) -> Any:
    """The app. `max_queries` caps one request's queries and `max_query_chars` each query's
    length (a 413 naming the limit beyond either), so the work one request can ask for is
    bounded; the batcher's fair share keeps a big batch from delaying anyone else's query."""
    from contextlib import asynccontextmanager

    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    batcher = _Batcher(retriever, max_batch, window_s)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        task = asyncio.create_task(batcher.run())
        yield
        task.cancel()

    app = FastAPI(title="envgym retriever", lifespan=lifespan)
    app.state.batcher = batcher

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "kind": getattr(retriever, "kind", type(retriever).__name__),
                "n_docs": len(getattr(retriever, "docs", [])), "batches": batcher.calls,
                "queries": batcher.served}

    @app.post("/retrieve")
    async def retrieve(request: RetrieveRequest) -> JSONResponse:
        queries = request.as_list()
        if len(queries) > max_queries:
            return JSONResponse(status_code=413, content={"detail": (
                f"{len(queries)} queries in one request; this server takes at most "
                f"{max_queries} (--max-queries): split the batch")})
        longest = max(range(len(queries)), key=lambda i: len(queries[i]), default=None)
        if longest is not None and len(queries[longest]) > max_query_chars:
            return JSONResponse(status_code=413, content={"detail": (
                f"query {longest} is {len(queries[longest])} characters; this server takes "
                f"at most {max_query_chars} a query (--max-query-chars): shorten it")})
        hits = await batcher.submit(queries, request.topk or default_topk)
        # A plain JSONResponse: the rows are already JSON types, and FastAPI's generic
        # encoder would walk every hit again (a third of the server's time per request).
        return JSONResponse({"result": [[h.to_dict() for h in row] for row in hits]})

    return app


def serve(retriever: Retriever, host: str = "127.0.0.1", port: int = 8000, *,
          shutdown_timeout: float = 10.0, ready: str | None = None, **kwargs: Any) -> None:
    """Run the server in the foreground; loopback by default (infra §B.4.2). SIGTERM stops
    accepting, lets in-flight searches finish within `shutdown_timeout`, and exits 0."""
    from envgym.serving import run_server

    run_server(create_app(retriever, **kwargs), host=host, port=port,
               shutdown_timeout=shutdown_timeout, ready=ready)


def _hit(item: dict[str, Any]) -> Hit:
    """One result in either of Search-R1's shapes (`{"document", "score"}` or the bare
    document). Search-R1's BM25 server sends documents without `id` (and sometimes as
    title/text): the id is then a stable digest of the contents."""
    doc, score = (item["document"], item.get("score", 0.0)) if "document" in item else (item, 0.0)
    contents = doc.get("contents")
    if contents is None:
        contents = f"{doc['title']}\n{doc.get('text', '')}"
    doc_id = doc.get("id")
    if doc_id is None:
        doc_id = "sha1:" + hashlib.sha1(str(contents).encode()).hexdigest()[:16]
    return Hit(Document(str(doc_id), str(contents)), float(score or 0.0))


class HTTPRetriever:
    """Client of `/retrieve`: retries connection errors, timeouts and 5xx with backoff."""

    kind = "http"

    def __init__(self, url: str, *, timeout: float = 10.0, retries: int = 5, backoff: float = 0.2,
                 max_per_request: int = 256, max_query_chars: int = MAX_QUERY_CHARS):
        import httpx

        base = url.rstrip("/")
        self.url = base if base.endswith("/retrieve") else base + "/retrieve"
        self.client = httpx.Client(timeout=timeout)
        self.retries, self.backoff = retries, backoff
        self.max_per_request = max(1, max_per_request)  # under any server's --max-queries
        self.max_query_chars = max_query_chars  # cut as in-process retrieval cuts, not a 413

    def search(self, queries: list[str], topk: int) -> list[list[Hit]]:
        queries = [q[:self.max_query_chars] for q in queries]
        step = self.max_per_request
        return [row for i in range(0, len(queries), step)
                for row in self._search(queries[i:i + step], topk)]

    def _search(self, queries: list[str], topk: int) -> list[list[Hit]]:
        if not queries:
            return []
        body = {"queries": queries, "topk": int(topk), "return_scores": True}
        payload = self._post(body)
        try:
            rows = payload["result"]
            if len(rows) != len(queries):
                raise ValueError(f"{len(rows)} result lists for {len(queries)} queries")
            return [[_hit(h) for h in row] for row in rows]
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise RetrieverUnavailable(f"retriever {self.url} sent a malformed /retrieve answer "
                                       f"({type(e).__name__}: {e}); expected "
                                       '{"result": [[{"document": {"contents": ...}, "score": ...}]]}'
                                       ) from e

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        error = ""
        for attempt in range(self.retries + 1):
            try:
                r = self.client.post(self.url, json=body)
                if r.status_code < 500:
                    if r.status_code != 200:
                        raise RetrieverUnavailable(f"{self.url} answered {r.status_code}: {r.text[:300]}")
                    return r.json()
                error = f"HTTP {r.status_code}: {r.text[:200]}"
            except httpx.TransportError as e:
                error = f"{type(e).__name__}: {e}"
            if attempt < self.retries:
                time.sleep(self.backoff * (attempt + 1))
        raise RetrieverUnavailable(f"retriever {self.url} failed after {self.retries + 1} attempts "
                                   f"({error}); is `envgym serve-retriever` running?")

    def close(self) -> None:
        self.client.close()

"""The Search-R1-compatible retrieval server and its httpx client.

`POST /retrieve` takes `{"queries": [...], "topk": k, "return_scores": bool}` (or a single
`"query"`, SkyRL style) and answers `{"result": [[{"document": {"id", "contents"}, "score"}]]}`,
one list per query in request order, for any batch size and either `return_scores` (the
Search-R1 server's unpack bug, infra §B.4.1, is the reason for the fixed response shape).
Concurrent requests are merged into one batched `search` call (requests that arrive while
a search runs go together in the next one), because per-trajectory clients send one query
at a time and batched retrieval is far faster (§B.5).
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections import deque
from typing import Any

from pydantic import BaseModel, Field, model_validator

from envgym.environments.search.retrievers import Document, Hit, Retriever
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


class _Batcher:
    """Merges concurrent requests into one `search` call (micro-batching).

    One search runs at a time; requests that arrive meanwhile queue up and go together in
    the next call, up to `max_batch` queries. So a lone client pays no wait, and under load
    batches grow by themselves. `window_s` > 0 additionally waits that long for company
    after the first request of a batch (useful only when a batch is much cheaper per query
    than single searches and clients are few)."""

    def __init__(self, retriever: Retriever, max_batch: int = 64, window_s: float = 0.0):
        self.retriever, self.max_batch, self.window_s = retriever, max_batch, window_s
        self.queue: asyncio.Queue = asyncio.Queue()
        self.lock = threading.Lock()  # faiss/bm25 objects are not assumed thread-safe
        self.calls = self.served = 0  # search calls made and queries answered, for /health
        self.batches: deque[int] = deque(maxlen=1024)  # sizes of the latest search calls

    async def submit(self, queries: list[str], topk: int) -> list[list[Hit]]:
        future = asyncio.get_running_loop().create_future()
        await self.queue.put((queries, topk, future))
        return await future

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            items = [await self.queue.get()]
            deadline = loop.time() + self.window_s
            while sum(len(q) for q, _, _ in items) < self.max_batch:
                if not self.queue.empty():  # arrived while the last search ran
                    items.append(self.queue.get_nowait())
                    continue
                left = deadline - loop.time()
                if left <= 0:
                    break
                try:
                    items.append(await asyncio.wait_for(self.queue.get(), left))
                except asyncio.TimeoutError:
                    break
            await self._serve(items)

    async def _serve(self, items: list) -> None:
        queries = [q for qs, _, _ in items for q in qs]
        k = max(topk for _, topk, _ in items)
        try:
            results = await asyncio.to_thread(self._search, queries, k)
        except Exception as e:
            for _, _, future in items:
                if not future.done():
                    future.set_exception(e)
            return
        pos = 0
        for qs, topk, future in items:
            if not future.done():  # the client may have gone away
                future.set_result([hits[:topk] for hits in results[pos:pos + len(qs)]])
            pos += len(qs)

    def _search(self, queries: list[str], k: int) -> list[list[Hit]]:
        with self.lock:
            self.calls += 1
            self.served += len(queries)
            self.batches.append(len(queries))
            return self.retriever.search(queries, k) if queries else []


def create_app(retriever: Retriever, *, default_topk: int = 3, max_batch: int = 64,
               window_s: float = 0.0, max_queries: int = 1024) -> Any:
    """The app. `max_queries` caps one request's queries (a 413 beyond it), so one client's
    huge batch cannot hold the search lock while everyone else waits behind it."""
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
                 max_per_request: int = 256):
        import httpx

        base = url.rstrip("/")
        self.url = base if base.endswith("/retrieve") else base + "/retrieve"
        self.client = httpx.Client(timeout=timeout)
        self.retries, self.backoff = retries, backoff
        self.max_per_request = max(1, max_per_request)  # under any server's --max-queries

    def search(self, queries: list[str], topk: int) -> list[list[Hit]]:
        queries = list(queries)
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

import threading

import httpx
import pytest

from envgym.environments.search.http import HTTPRetriever, create_app
from envgym.environments.search.judges import HTTPJudge, parse_score
from envgym.environments.search.env import SearchEnv
from envgym.errors import RetrieverUnavailable



@pytest.fixture(scope="module")
def server(bm25, server_thread):
    app = create_app(bm25, window_s=0.05)
    with server_thread(app) as url:
        yield url, app


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("return_scores", [True, False])
def test_retrieve_probe_matches_in_process_search(server, bm25, n, return_scores):
    url, _ = server
    queries = ["Trisk Havel born", "Glass Guild founded", "Dastow located"][:n]
    r = httpx.post(f"{url}/retrieve", json={"queries": queries, "topk": 2, "return_scores": return_scores})
    assert r.status_code == 200
    result = r.json()["result"]
    expected = bm25.search(queries, 2)
    assert len(result) == n
    for row, hits in zip(result, expected):
        assert [x["document"] for x in row] == [h.document.to_dict() for h in hits]
        assert [x["score"] for x in row] == pytest.approx([h.score for h in hits])


def test_single_query_default_topk_and_health(server):
    url, _ = server
    r = httpx.post(f"{url}/retrieve", json={"query": "Orrin Pell born"}).json()
    assert len(r["result"]) == 1 and len(r["result"][0]) == 3
    assert r["result"][0][0]["document"]["id"] == "2"
    assert httpx.get(f"{url}/health").json()["status"] == "ok"


@pytest.mark.parametrize("body", [{}, {"queries": "not a list"}, {"queries": ["a"], "topk": 0},
                                  {"queries": ["a"], "query": "b"}])
def test_malformed_bodies_get_422(server, body):
    r = httpx.post(f"{server[0]}/retrieve", json=body)
    assert r.status_code == 422 and "detail" in r.json()


def test_concurrent_requests_are_batched(server):
    url, app = server
    before = len(app.state.batcher.batches)
    results = [None] * 8

    def client(i):
        results[i] = HTTPRetriever(url).search([f"Trisk Havel born {i}"], 1)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    calls = app.state.batcher.batches[before:]
    assert sum(calls) == 8 and len(calls) < 8  # fewer search calls than requests
    assert all(r[0][0].document.id == "1" for r in results)


def test_env_through_http_retriever(server):
    env = SearchEnv(retriever=server[0])
    env.reset(seed=0)
    _, _, _, _, info = env.step("<think>t</think><search>Velmora located</search>")
    assert info["retrieved_ids"][0] == "0"


def test_client_retries_then_reports_unavailable(unused_port):
    client = HTTPRetriever(f"http://127.0.0.1:{unused_port}", retries=2, backoff=0.01)
    with pytest.raises(RetrieverUnavailable, match="3 attempts"):
        client.search(["q"], 1)
    env = SearchEnv(retriever=client)
    env.reset(seed=0)
    obs, r, term, trunc, info = env.step("<think>t</think><search>q</search>")
    assert "Search error" in obs[0]["content"] and "retrieval_error" in info and not term


def test_client_retries_5xx_until_success(server_thread):
    from fastapi import FastAPI

    app, calls = FastAPI(), []

    @app.post("/retrieve")
    def flaky(body: dict):
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError("boom")  # -> 500
        return {"result": [[{"document": {"id": "9", "contents": '"T"\nx'}, "score": 1.5}]]}

    with server_thread(app) as url:
        hits = HTTPRetriever(url, retries=3, backoff=0.01).search(["q"], 1)
    assert len(calls) == 3 and hits[0][0].document.title == "T" and hits[0][0].score == 1.5


@pytest.mark.parametrize("text,score", [("<explanation>ok</explanation><score>1</score>", 1.0),
                                        ("<score> -1 </score>", -1.0), ("Rating: 0", 0.0),
                                        ("Score: -1 because", -1.0), ("I give it 1 point", 1.0),
                                        ("no idea", 0.0), ("<score>5</score>", 1.0)])
def test_parse_score_fallbacks(text, score):
    assert parse_score(text) == score


def test_http_judge_against_local_server_with_cache(server_thread):
    from fastapi import FastAPI

    app, seen = FastAPI(), []

    @app.post("/v1/chat/completions")
    def chat(body: dict):
        seen.append(body)
        prompt = body["messages"][0]["content"]
        reply = "<explanation>fine</explanation><score>1</score>" if "Query: good" in prompt else "Score: -1"
        return {"choices": [{"message": {"role": "assistant", "content": reply}}]}

    with server_thread(app) as url:
        judge = HTTPJudge(f"{url}/v1", model="judge-model")
        items = [{"question": "q?", "thinking": "t", "query": "good"},
                 {"question": "q?", "thinking": "t", "query": "bad"}]
        assert judge.judge("query", items) == [1.0, -1.0]
        assert judge.judge("query", items) == [1.0, -1.0]
        judge.close()
    assert len(seen) == 2 and judge.calls == 2  # the repeat came from the cache
    assert seen[0]["temperature"] == 0 and seen[0]["model"] == "judge-model"
    assert "novelty" in seen[0]["messages"][0]["content"]

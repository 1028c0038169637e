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
    batcher = app.state.batcher
    calls, served = batcher.calls, batcher.served
    results = [None] * 8

    def client(i):
        results[i] = HTTPRetriever(url).search([f"Trisk Havel born {i}"], 1)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert batcher.served - served == 8
    assert batcher.calls - calls < 8  # fewer search calls than requests
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


def test_search_r1_server_documents_without_id_and_malformed_answers(server_thread):
    """Search-R1's BM25 server sends bare `{"contents"}` documents (no id), or title/text."""
    from fastapi import FastAPI

    app, mode = FastAPI(), {"shape": "scored"}

    @app.post("/retrieve")
    def retrieve(body: dict):
        doc = {"contents": '"Velmora"\nVelmora is a city.'}
        if mode["shape"] == "bare":
            return {"result": [[{"title": '"Dastow"', "text": "Dastow exports honey."}]]}
        if mode["shape"] == "broken":
            return {"result": "oops"}
        return {"result": [[{"document": doc, "score": 2.0}]]}

    with server_thread(app) as url:
        client = HTTPRetriever(url, retries=0)
        (hit,), = client.search(["q"], 1)
        (again,), = client.search(["q"], 1)
        assert hit.document.title == "Velmora" and hit.document.id.startswith("sha1:")
        assert hit.document.id == again.document.id  # stable, from the contents
        mode["shape"] = "bare"
        (bare,), = client.search(["q"], 1)
        assert bare.document.title == "Dastow" and bare.score == 0.0
        mode["shape"] = "broken"
        with pytest.raises(RetrieverUnavailable, match="malformed"):
            client.search(["q"], 1)
        env = SearchEnv(retriever=client)
        env.reset(seed=0)
        obs, r, term, trunc, info = env.step("<think>t</think><search>q</search>")
    assert "malformed" in obs[0]["content"] and "retrieval_error" in info and not term


def _judge_app(replies: list[str], seen: list[dict]):
    from fastapi import FastAPI

    app = FastAPI()

    @app.get("/v1/models")
    def models():
        return {"object": "list", "data": [{"id": "judge-model", "object": "model"}]}

    @app.post("/v1/chat/completions")
    def chat(body: dict):
        seen.append(body)
        return {"choices": [{"message": {"role": "assistant", "content": replies[0]}}]}

    return app


def test_http_judge_from_a_config_string_scores_steps(server_thread):
    """`judge = "http://…/v1#MODEL"` from a config reaches a real OpenAI-compatible server."""
    seen: list[dict] = []
    with server_thread(_judge_app(["<score>1</score>"], seen)) as url:
        env = SearchEnv(judge=f"{url}/v1#judge-model", max_turns=4)
        env.reset(seed=0)
        _, r, *_, info = env.step("<think>who is it</think><search>Velmora city</search>")
        assert info["reward_components"] == {"judge_think": 1.0, "judge_query": 1.0} and r == 2.0
        plain = SearchEnv(judge=f"{url}/v1")  # no #MODEL: the server's first model
        assert plain.judge.model == "judge-model"
    assert seen and all(b["model"] == "judge-model" and b["temperature"] == 0 for b in seen)


def test_judge_dying_mid_run_fails_the_episode_visibly(server_thread):
    """A judge that dies after start-up gives a failed episode naming it, never a silent 0."""
    from envgym.errors import PolicyError

    seen: list[dict] = []
    with server_thread(_judge_app(["<score>1</score>"], seen)) as url:
        env = SearchEnv(judge=f"{url}/v1#judge-model", judge_timeout=1.0)
        env.reset(seed=1)
    env.judge.retries = 0  # the server is gone now
    with pytest.raises(PolicyError, match="judge server"):
        env.step("<think>x y z</think><search>another query</search>")


def test_max_queries_caps_a_request_and_the_server_stays_up(bm25, server_thread):
    with server_thread(create_app(bm25, max_queries=10)) as url:
        with httpx.Client(base_url=url, timeout=30) as client:
            r = client.post("/retrieve", json={"queries": ["Trisk Havel born"] * 11})
            assert r.status_code == 413 and "--max-queries" in r.json()["detail"]
            ok = client.post("/retrieve", json={"queries": ["Trisk Havel born"] * 10})
            assert ok.status_code == 200 and len(ok.json()["result"]) == 10
            assert client.get("/health").status_code == 200
        # the client splits big batches under the cap, in order
        remote = HTTPRetriever(url, max_per_request=4)
        queries = [f"Glass Guild founded {i}" for i in range(9)]
        assert [[h.document.id for h in row] for row in remote.search(queries, 2)] == [
            [h.document.id for h in row] for row in bm25.search(queries, 2)]


def test_serve_retriever_drains_and_exits_zero_on_sigterm(bm25, tmp_path):
    from tests.server_process import ServerProcess

    bm25.save(tmp_path / "index")
    server = ServerProcess(["serve-retriever", "--index", str(tmp_path / "index"),
                            "--max-queries", "5", "--shutdown-timeout", "3"], tmp_path / "log")
    try:
        assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200
        r = httpx.post(f"{server.url}/retrieve", json={"queries": ["a"] * 6}, timeout=10)
        assert r.status_code == 413
    finally:
        code, _ = server.terminate(timeout=20)
    assert code == 0, server.text()
    assert "Traceback" not in server.text()

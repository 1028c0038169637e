"""`serve-policy` under bad input, load and faults, on loopback with bounded loops.

Every case asserts its status code and that the server still answers afterwards, on the same
keep-alive connection where it matters (an error must not drop it).
"""

from __future__ import annotations

import json
import math
import socket
import threading
import time

import httpx
import pytest

from envgym.agents.policies.server import create_app
from envgym.agents.policies.server_engine import Engine, Row
from envgym.agents.policies.server_params import Limits
from envgym.policy import SamplingParams

CONV = [{"role": "user", "content": "Find it. <search>"}]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Served:
    def __init__(self, app):
        from envgym.serving import make_server
        self.port = _port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = make_server(app, host="127.0.0.1", port=self.port, shutdown_timeout=2)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        for _ in range(400):
            if self.server.started:
                return
            time.sleep(0.025)
        raise RuntimeError("server did not start")

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def served(tiny_policy):
    limits = Limits(max_tokens=4000, max_prompt_tokens=200, context=8192,
                    vocab=len(tiny_policy.tokenizer))
    s = _Served(create_app(tiny_policy, model_name="tiny", limits=limits, chunk_tokens=8))
    yield s
    s.close()


@pytest.fixture
def client(served):
    with httpx.Client(base_url=served.url, timeout=60) as c:
        yield c


def _alive(client: httpx.Client) -> None:
    """The same connection still works: health, then a real completion."""
    assert client.get("/health").status_code == 200
    r = client.post("/v1/completions", json={"prompt": "hi", "max_tokens": 2})
    assert r.status_code == 200 and len(r.json()["choices"][0]["token_ids"]) == 2


def _error(r: httpx.Response, param: str | None) -> dict:
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "invalid_request_error" and err["param"] == param
    assert err["message"]
    return err


BAD = [
    ({"prompt": "hi", "max_tokens": 0}, "max_tokens"),
    ({"prompt": "hi", "max_tokens": -1}, "max_tokens"),
    ({"prompt": "hi", "max_tokens": 4001}, "max_tokens"),
    ({"prompt": "hi", "max_tokens": "8"}, "max_tokens"),
    ({"prompt": "hi", "temperature": "hot"}, "temperature"),
    ({"prompt": "hi", "temperature": -1}, "temperature"),
    ({"prompt": "hi", "top_p": 0}, "top_p"),
    ({"prompt": "hi", "top_p": 1.5}, "top_p"),
    ({"prompt": "hi", "stop": 5}, "stop"),
    ({"prompt": "hi", "stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({"prompt": "hi", "n": 0}, "n"),
    ({"prompt": "hi", "seed": "x"}, "seed"),
    ({"prompt": "hi", "logprobs": 50}, "logprobs"),
    ({"prompt": "hi", "stream": "yes"}, "stream"),
    ({"prompt": "hi", "presence_penalty": 0.5}, "presence_penalty"),
    ({"prompt": "hi", "logit_bias": {"5": 1}}, "logit_bias"),
    ({"prompt": 3}, "prompt"),
    ({"prompt": []}, "prompt"),
    ({"prompt": [999999]}, "prompt"),
    ({"prompt": [-1]}, "prompt"),
    ({"prompt": [1, True]}, "prompt"),
    ({"prompt": "x " * 400}, "prompt"),  # over --max-prompt-tokens (200)
]


@pytest.mark.parametrize("body,param", BAD, ids=[f"{p}-{i}" for i, (_, p) in enumerate(BAD)])
def test_invalid_completion_parameters_are_400s_naming_the_field(client, body, param):
    _error(client.post("/v1/completions", json=body), param)
    _alive(client)


CHAT_BAD = [
    ({"messages": ["hi"]}, "messages[0]"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
    ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
     "messages[0].content[0]"),
    ({"messages": CONV, "top_logprobs": 3}, "top_logprobs"),
    ({"messages": CONV, "logprobs": True, "top_logprobs": 21}, "top_logprobs"),
    ({"messages": CONV, "tools": [{"type": "function"}]}, "tools"),
    ({"messages": CONV, "max_tokens": 0}, "max_tokens"),
]


@pytest.mark.parametrize("body,param", CHAT_BAD,
                         ids=[f"{p}-{i}" for i, (_, p) in enumerate(CHAT_BAD)])
def test_invalid_chat_parameters_are_400s_naming_the_field(client, body, param):
    _error(client.post("/v1/chat/completions", json=body), param)
    _alive(client)


def test_an_unknown_model_is_a_404_model_not_found(client):
    r = client.post("/v1/completions", json={"prompt": "hi", "model": "not-this-one"})
    assert r.status_code == 404, r.text
    err = r.json()["error"]
    assert err["code"] == "model_not_found" and err["param"] == "model"
    assert "not-this-one" in err["message"]
    _alive(client)


@pytest.mark.parametrize("path,key", [("/v1/completions", "prompt"),
                                      ("/v1/chat/completions", "messages")])
def test_json_nested_100000_deep_is_a_400(client, path, key):
    body = '{"%s": %s1%s}' % (key, "[" * 100_000, "]" * 100_000)
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text[:200]
    assert "nested" in r.json()["error"]["message"]
    _alive(client)


def test_a_huge_prompt_is_refused_by_characters_before_tokenising(served, client, monkeypatch):
    """1 MB of text never reaches the tokenizer: the character cap answers first."""
    from envgym.agents.policies import server as server_mod

    seen: list[int] = []
    real = server_mod._API._encode_all

    def spy(self, items):
        seen.extend(len(i) for i in items if isinstance(i, str))
        return real(self, items)

    monkeypatch.setattr(server_mod._API, "_encode_all", spy)
    for path, body in (("/v1/completions", {"prompt": "x" * 1_000_000}),
                       ("/v1/chat/completions",
                        {"messages": [{"role": "user", "content": "x" * 1_000_000}]})):
        r = client.post(path, json=body)
        assert r.status_code == 400, r.text
        err = r.json()["error"]
        assert err["code"] == "context_length_exceeded" and "--max-prompt-chars" in err["message"]
        assert "1600" in err["message"]  # 8 characters a token of --max-prompt-tokens 200
    assert seen == []
    _alive(client)


class _ByteTokens:
    """A byte-level tokenizer: one token per UTF-8 byte, as byte-level BPE can split."""

    def encode(self, text):
        return list(text.encode())

    def decode(self, ids):
        return bytes(ids).decode("utf-8", errors="replace")


def test_completion_text_never_ends_in_half_a_character():
    """Ids that stop inside a multi-byte character decode to U+FFFD; it is held back."""
    from types import SimpleNamespace

    from envgym.agents.policies.server import _API
    from envgym.agents.policies.server_params import parse_common

    api = _API(SimpleNamespace(chat=_ByteTokens()), "tiny", {"tiny"},
               Limits(64, 64, None, None), {})
    ids = list("ok \u4e2d\u6587".encode())[:-1]  # the last character loses its last byte
    row = Row(ids, SamplingParams(max_tokens=len(ids)), ids=ids, finish="length")
    text, raw = api._texts(row, parse_common({"max_tokens": len(ids)}, api.limits, chat=False))
    assert raw.endswith("\ufffd") and text == "ok \u4e2d"
    choice = api._completion_choice(0, row, parse_common({}, api.limits, chat=False))
    assert choice["text"] == "ok \u4e2d" and choice["token_ids"] == ids


def test_nan_temperature_and_broken_json_are_400s(client):
    raw = json.dumps({"prompt": "hi", "temperature": math.nan})  # NaN literal, as JS sends
    r = client.post("/v1/completions", content=raw, headers={"content-type": "application/json"})
    _error(r, "temperature")
    for raw in ("{not json", "[1, 2]", ""):
        r = client.post("/v1/completions", content=raw,
                        headers={"content-type": "application/json"})
        _error(r, None)
    _alive(client)


def test_content_parts_messages_are_accepted(client):
    parts = [{"role": "user", "content": [{"type": "text", "text": "Find it. "},
                                          {"type": "text", "text": "<search>"}]}]
    a = client.post("/v1/chat/completions",
                    json={"messages": parts, "max_tokens": 6, "temperature": 0})
    b = client.post("/v1/chat/completions",
                    json={"messages": CONV, "max_tokens": 6, "temperature": 0})
    assert a.status_code == b.status_code == 200
    assert a.json()["choices"][0]["token_ids"] == b.json()["choices"][0]["token_ids"]


def test_a_bad_row_fails_alone_never_its_batch_mates(served):
    good = {"prompt": [5, 6, 7], "max_tokens": 4, "temperature": 0.7}
    bodies = [good] * 8 + [{**good, "prompt": [999999]}, {**good, "prompt": [-1]}]
    results: list[int] = [0] * len(bodies)

    def post(i: int) -> None:
        results[i] = httpx.post(f"{served.url}/v1/completions", json=bodies[i],
                                timeout=60).status_code
    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == [200] * 8 + [400, 400]


def test_a_long_request_does_not_hold_up_short_ones(served, client):
    """A greedy 3000-token request (the tiny model never emits EOS) is still decoding while
    short requests arrive, are answered and return; then a disconnect cancels it."""
    long_done = threading.Event()

    def long() -> None:
        try:
            httpx.post(f"{served.url}/v1/completions", timeout=3.0,
                       json={"prompt": "hello", "max_tokens": 3000, "temperature": 0})
            long_done.set()
        except httpx.TimeoutException:  # the client gives up and disconnects
            pass
    thread = threading.Thread(target=long)
    thread.start()
    for _ in range(200):  # until the long row is decoding
        if client.get("/health").json()["live_rows"] >= 1:
            break
        time.sleep(0.01)
    for _ in range(3):
        r = client.post("/v1/completions", json={"prompt": "hi", "max_tokens": 4})
        assert r.status_code == 200 and len(r.json()["choices"][0]["token_ids"]) == 4
        assert not long_done.is_set()
    thread.join(10)
    assert not long_done.is_set()  # 3000 tokens take far longer than 3 s here
    for _ in range(200):  # the disconnect cancels its rows within a few rounds
        if client.get("/health").json()["live_rows"] == 0:
            break
        time.sleep(0.05)
    assert client.get("/health").json()["live_rows"] == 0
    _alive(client)


def test_stop_strings_are_cut_from_text_and_kept_in_extension_fields(client, tiny_policy):
    prompt = tiny_policy.chat.prompt_ids(CONV)
    free = tiny_policy.generate([prompt], SamplingParams(max_tokens=20, temperature=0))[0]
    stop = tiny_policy.chat.decode(free.token_ids[5:7])
    body = {"prompt": prompt, "max_tokens": 20, "temperature": 0, "stop": [stop]}
    choice = client.post("/v1/completions", json=body).json()["choices"][0]
    assert choice["finish_reason"] == "stop" and choice["stop_reason"] == stop
    assert choice["envgym"]["finish"] == "stop_string"
    assert stop not in choice["text"] and choice["envgym"]["text"].startswith(choice["text"])
    assert stop in choice["envgym"]["text"]
    assert choice["token_ids"] == free.token_ids[:len(choice["token_ids"])]
    kept = client.post("/v1/completions",
                       json={**body, "include_stop_str_in_output": True}).json()["choices"][0]
    assert kept["text"] == choice["envgym"]["text"]


def test_n_seeds_and_logprobs(client):
    body = {"prompt": "hello", "max_tokens": 6, "n": 3, "seed": 7, "temperature": 1.0,
            "logprobs": 3}
    a = client.post("/v1/completions", json=body).json()["choices"]
    b = client.post("/v1/completions", json=body).json()["choices"]
    assert [c["index"] for c in a] == [0, 1, 2]
    assert [c["token_ids"] for c in a] == [c["token_ids"] for c in b]  # seeded: reproducible
    assert len({tuple(c["token_ids"]) for c in a}) > 1  # choice j is seeded seed + j
    for c in a:
        tops = c["logprobs"]["top_logprobs"]
        assert len(tops) == 6 and all(1 <= len(t) <= 3 for t in tops)
        for t, lp, top in zip(c["logprobs"]["tokens"], c["logprobs"]["token_logprobs"], tops):
            assert max(top.values()) >= lp - 1e-4  # nothing likelier than the top entry
            if t in top:
                assert top[t] == pytest.approx(lp, abs=1e-3)
    chat = client.post("/v1/chat/completions", json={
        "messages": CONV, "max_tokens": 4, "n": 2, "logprobs": True, "top_logprobs": 2,
        "temperature": 0}).json()["choices"]
    assert len(chat) == 2
    for entry in chat[0]["logprobs"]["content"]:
        assert len(entry["top_logprobs"]) == 2
        assert entry["top_logprobs"][0]["logprob"] == pytest.approx(entry["logprob"], abs=1e-3)


def test_official_openai_client_with_streaming(served):
    import openai  # in the [dev] extra
    client = openai.OpenAI(base_url=f"{served.url}/v1", api_key="none", max_retries=0)
    assert [m.id for m in client.models.list().data] == ["tiny"]
    whole = client.completions.create(model="tiny", prompt="hello", max_tokens=12,
                                      temperature=0)
    chunks = list(client.completions.create(model="tiny", prompt="hello", max_tokens=12,
                                            temperature=0, stream=True))
    assert len(chunks) >= 2  # 12 tokens in rounds of 8
    assert "".join(c.choices[0].text for c in chunks) == whole.choices[0].text
    assert chunks[-1].choices[0].finish_reason == "length"
    chat = client.chat.completions.create(model="tiny", messages=CONV, max_tokens=10,
                                          temperature=0)
    stream = list(client.chat.completions.create(
        model="tiny", messages=CONV, max_tokens=10, temperature=0, stream=True,
        stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == chat.choices[0].message.content
    assert stream[-1].usage.completion_tokens == 10
    with pytest.raises(openai.NotFoundError) as info:  # 404 model_not_found, as OpenAI's
        client.chat.completions.create(model="other", messages=CONV, max_tokens=2)
    assert info.value.body["param"] == "model" and info.value.body["code"] == "model_not_found"
    assert client.completions.create(model="tiny", prompt="hi", max_tokens=1).choices


def test_streamed_stop_string_is_never_sent(client, tiny_policy):
    prompt = tiny_policy.chat.prompt_ids(CONV)
    free = tiny_policy.generate([prompt], SamplingParams(max_tokens=30, temperature=0))[0]
    stop = tiny_policy.chat.decode(free.token_ids[9:11])  # crosses the round of 8
    body = {"prompt": prompt, "max_tokens": 30, "temperature": 0, "stop": stop, "stream": True}
    text, ids, finish = "", [], None
    with client.stream("POST", "/v1/completions", json=body) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                c = json.loads(line[6:])["choices"][0]
                text, ids = text + c["text"], ids + c["token_ids"]
                finish = c["finish_reason"] or finish
    whole = client.post("/v1/completions", json={**body, "stream": False}).json()["choices"][0]
    assert finish == "stop" and stop not in text and text == whole["text"]
    assert ids == whole["token_ids"]
    _alive(client)


# ---- the scheduler on its own --------------------------------------------------------------

class _Spy:
    """A policy recording each `generate` call; `per_row` takes one SamplingParams a row."""

    def __init__(self, base, per_row: bool, fail_on: int | None = None):
        self.base, self.chat, self.per_row, self.fail_on = base, base.chat, per_row, fail_on
        self.calls: list[list[SamplingParams]] = []

    def generate(self, prompts, sampling):
        if isinstance(sampling, SamplingParams):
            params = [sampling] * len(prompts)
        elif not self.per_row:
            raise AttributeError("'list' object has no attribute 'seed'")  # today's hf.py
        else:
            params = list(sampling)
        if self.fail_on is not None and any(self.fail_on in p for p in prompts):
            raise RuntimeError("device-side assert")
        self.calls.append(params)
        return [self.base.generate([p], s)[0] for p, s in zip(prompts, params)]


async def _run_rows(policy, rows, chunk=4):
    import asyncio
    engine = Engine(policy, chunk_tokens=chunk)
    task = asyncio.create_task(engine.run())
    engine.submit(rows)
    results = await asyncio.gather(*(r.future for r in rows), return_exceptions=True)
    task.cancel()
    return engine, results


def _rows(temps, seeded=False):
    """Unseeded rows share batched calls; seeded ones decode alone (test_server_seeds.py)."""
    return [Row([5, 6, 7], SamplingParams(max_tokens=8, temperature=t,
                                          seed=i if seeded else None))
            for i, t in enumerate(temps)]


def test_distinct_temperatures_share_one_call_per_round(tiny_policy):
    import asyncio
    spy = _Spy(tiny_policy, per_row=True)
    rows = _rows([0.3, 0.6, 0.9, 1.2])
    engine, results = asyncio.run(_run_rows(spy, rows))
    assert all(isinstance(r, Row) and len(r.ids) == 8 for r in results)
    assert len(spy.calls) == 2  # 8 tokens in rounds of 4, every row in each call
    assert {p.temperature for p in spy.calls[0]} == {0.3, 0.6, 0.9, 1.2}
    assert engine.per_row is True


def test_seeded_rows_decode_in_calls_of_their_own(tiny_policy):
    import asyncio
    spy = _Spy(tiny_policy, per_row=True)
    rows = _rows([0.3, 0.6, 0.9], seeded=True) + _rows([0.5, 0.7])
    _, results = asyncio.run(_run_rows(spy, rows))
    assert all(len(r.ids) == 8 for r in results)
    alone = [c for c in spy.calls if len(c) == 1]
    assert len(alone) == 6 and all(c[0].seed is not None for c in alone)  # 3 rows x 2 rounds
    assert all(p.seed is None for c in spy.calls if len(c) > 1 for p in c)


def test_single_setting_policies_get_one_call_per_setting(tiny_policy):
    import asyncio
    spy = _Spy(tiny_policy, per_row=False)
    rows = _rows([0.3, 0.6])
    engine, results = asyncio.run(_run_rows(spy, rows))
    assert all(len(r.ids) == 8 for r in results) and engine.per_row is False
    assert all(len(set(call)) == 1 for call in spy.calls) and len(spy.calls) == 4


def test_a_failing_row_is_isolated_in_the_engine(tiny_policy):
    import asyncio
    spy = _Spy(tiny_policy, per_row=True, fail_on=99)
    rows = _rows([0.5, 0.5, 0.5])
    rows[1].prompt = [5, 99, 7]
    _, results = asyncio.run(_run_rows(spy, rows))
    assert isinstance(results[1], RuntimeError)
    assert [len(results[i].ids) for i in (0, 2)] == [8, 8]


def test_chunked_greedy_decoding_matches_one_call(tiny_policy):
    """Chunks re-prefill what was generated: the ids are those of one uninterrupted call,
    also when a stop string spans a chunk boundary."""
    import asyncio
    prompt = tiny_policy.chat.prompt_ids(CONV)
    whole = tiny_policy.generate([prompt], SamplingParams(max_tokens=24, temperature=0))[0]
    stop = tiny_policy.chat.decode(whole.token_ids[3:5])  # tokens 3-4: across chunks of 4
    direct = tiny_policy.generate([prompt], SamplingParams(max_tokens=24, temperature=0,
                                                           stop=(stop,)))[0]
    rows = [Row(list(prompt), SamplingParams(max_tokens=24, temperature=0)),
            Row(list(prompt), SamplingParams(max_tokens=24, temperature=0, stop=(stop,)))]
    _, (free, cut) = asyncio.run(_run_rows(tiny_policy, rows, chunk=4))
    assert free.ids == whole.token_ids and free.finish == "length"
    assert free.logprobs == pytest.approx(whole.logprobs, abs=1e-4)
    assert cut.ids == direct.token_ids and cut.finish == "stop" and cut.stop_hit == stop


def test_cli_is_ready_only_after_the_bind_and_drains_on_sigterm(tiny_dir, tmp_path):
    """The ready line names a port that already answers; SIGTERM during a long request
    answers it (503 at the deadline, or complete) and the process exits 0."""
    from tests.server_process import ServerProcess

    server = ServerProcess(["serve-policy", f"hf:{tiny_dir}", "--shutdown-timeout", "2",
                            "--max-tokens-limit", "5000"], tmp_path / "log")
    status: list[int] = []
    try:
        assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200
        r = httpx.post(f"{server.url}/v1/completions", json={"prompt": "hi", "max_tokens": 5001})
        assert r.status_code == 400 and r.json()["error"]["param"] == "max_tokens"
        long = threading.Thread(target=lambda: status.append(httpx.post(
            f"{server.url}/v1/completions", timeout=60,
            json={"prompt": "hello", "max_tokens": 5000, "temperature": 0}).status_code))
        long.start()
        for _ in range(200):
            if httpx.get(f"{server.url}/health").json()["live_rows"]:
                break
            time.sleep(0.02)
    finally:
        code, _ = server.terminate(timeout=30)
    long.join(30)
    assert code == 0, server.text()
    assert status in ([503], [200]) and "Traceback" not in server.text()

"""The openai backend against a real local `serve-policy` server on a free loopback port."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest

from envgym.errors import PolicyError
from envgym.policy import SamplingParams, load_policy

CONV = [{"role": "user", "content": "Find it. <search>"}]


@pytest.fixture(scope="module")
def server(tiny_policy):
    import uvicorn

    from envgym.agents.policies.server import create_app
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(create_app(tiny_policy, model_name=str(tiny_policy.name[3:])),
                            host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(5)


def test_greedy_token_ids_equal_the_hf_backend(server, tiny_policy, tiny_dir):
    remote = load_policy(f"openai:{server}/v1#{tiny_dir}", concurrency=4)
    assert remote.trainable
    prompts = [tiny_policy.chat.prompt_ids(CONV), tiny_policy.chat.prompt_ids(CONV * 2)]
    sampling = SamplingParams(max_tokens=12, temperature=0)
    local = tiny_policy.generate(prompts, sampling)
    got = remote.generate(prompts, sampling)
    assert [c.token_ids for c in got] == [c.token_ids for c in local]
    for a, b in zip(got, local):
        assert a.text == b.text and a.finish_reason == b.finish_reason
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)


def test_stop_strings_and_scores_go_through_the_server(server, tiny_policy, tiny_dir):
    remote = load_policy(f"openai:{server}#{tiny_dir}")  # /v1 is added when missing
    prompt = [tiny_policy.chat.prompt_ids(CONV)]
    free = tiny_policy.generate(prompt, SamplingParams(max_tokens=20, temperature=0))[0]
    stop = tiny_policy.chat.decode(free.token_ids[4:6])
    got = remote.generate(prompt, SamplingParams(max_tokens=20, temperature=0, stop=(stop,)))[0]
    assert got.finish_reason == "stop" and got.token_ids == free.token_ids[:len(got.token_ids)]
    assert remote.score(["The answer is"], [" 42"])[0] == pytest.approx(
        tiny_policy.score(["The answer is"], [" 42"])[0], abs=1e-4)


def test_chat_mode_is_text_only_and_model_is_discovered(server):
    remote = load_policy(f"openai:{server}", mode="chat")
    assert remote.tokenizer is None and not remote.trainable
    out = remote.generate([CONV], SamplingParams(max_tokens=5, temperature=0))[0]
    assert out.token_ids == [] and len(out.logprobs) == 5 and isinstance(out.text, str)


def test_server_reports_health_and_rejects_bad_prompts(server):
    assert httpx.get(f"{server}/health").json()["status"] == "ok"
    assert httpx.post(f"{server}/v1/completions", json={"prompt": 3}).status_code == 400


def test_unreachable_server_raises_after_retries(tiny_dir):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(PolicyError, match="Cannot list models"):
        load_policy(f"openai:http://127.0.0.1:{port}", timeout=2)
    dead = load_policy(f"openai:http://127.0.0.1:{port}#{tiny_dir}", retries=2, backoff=0.01)
    with pytest.raises(PolicyError, match="after 3 attempts"):
        dead.generate([[1, 2, 3]], SamplingParams(max_tokens=2))


def test_seeds_are_unique_per_episode_member_and_turn_across_calls(monkeypatch):
    """A group of 3 split over two engine calls (concurrency 2) once reused a seed."""
    from envgym.agents.policies.openai import OpenAIPolicy
    from envgym.core import StepResult, TextEnv, user
    from envgym.rollout import collect

    class TwoTurns(TextEnv):
        def _reset(self, seed, options):
            return [user("go")], {}

        def _step(self, action):
            return StepResult([user("again")], {"r": 0.0}, terminated=self.turn >= 2)

    seeds = []

    async def fake_post(self, client, path, body):
        seeds.append(body["seed"])
        return {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}

    monkeypatch.setattr(OpenAIPolicy, "_post", fake_post)
    policy = OpenAIPolicy("http://127.0.0.1:9", "m", mode="chat")
    trajs = collect(TwoTurns, policy, episodes=2, group_size=3, seed=5, concurrency=2,
                    sampling=SamplingParams(seed=1))
    assert all(t.error is None and len(t.turns) == 2 for t in trajs)
    assert len(seeds) == 12 and len(set(seeds)) == 12
    first = set(seeds)
    seeds.clear()
    collect(TwoTurns, policy, episodes=2, group_size=3, seed=5, concurrency=6,
            sampling=SamplingParams(seed=1))
    assert set(seeds) == first  # the same per-row seeds whatever the batching

"""Seeded sampling through `serve-policy` does not depend on load (issue 35, item 1).

The same 64 seeded requests are sent one at a time, all at once, and all at once beside
unseeded traffic of other lengths; every seeded choice must come back with the same ids.
Before the fix a lone row was handed the batch's single setting and sampled from
`mix_seed(seed, 0)` instead of its own seed, and a seeded row's logits moved with the
padding and prefix-cache hits its batch mates brought.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import httpx
import pytest

from envgym.agents.policies.server import create_app
from envgym.agents.policies.server_params import Limits

EPISODES = 64


class _Server:
    """`create_app` on a loopback port in a thread (the real uvicorn server)."""

    def __init__(self, app):
        from envgym.serving import make_server
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.server = make_server(app, host="127.0.0.1", port=port, shutdown_timeout=2)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.02)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def server(tiny_policy):
    limits = Limits(max_tokens=64, max_prompt_tokens=3000, context=8192,
                    vocab=len(tiny_policy.tokenizer))
    s = _Server(create_app(tiny_policy, model_name="tiny", limits=limits, chunk_tokens=4))
    yield s
    s.close()


def _episodes(policy) -> list[dict]:
    """64 distinct prompts of different lengths, each with its own seed."""
    chat = policy.chat
    return [{"model": "tiny", "max_tokens": 10, "temperature": 1.0, "seed": 1000 + i,
             "prompt": chat.prompt_ids([{"role": "user",
                                         "content": f"episode {i} " + "step " * (i % 7)}])}
            for i in range(EPISODES)]


def _noise(policy) -> list[dict]:
    """Unseeded requests with longer prompts, so they pad and batch with the seeded ones."""
    chat = policy.chat
    return [{"model": "tiny", "max_tokens": 24, "temperature": 1.0,
             "prompt": chat.prompt_ids([{"role": "user", "content": "noise " * (3 + 5 * j)}])}
            for j in range(16)]


async def _send(url: str, bodies: list[dict], concurrency: int,
                noise: list[dict] = ()) -> list[list[int]]:
    limit = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        async def one(body: dict) -> list[int]:
            async with limit:
                r = await client.post("/v1/completions", json=body)
            assert r.status_code == 200, r.text
            return r.json()["choices"][0]["token_ids"]

        async def flood() -> None:
            for _ in range(3):  # keep unseeded rows in flight for the whole run
                await asyncio.gather(*(client.post("/v1/completions", json=b) for b in noise))

        background = asyncio.create_task(flood()) if noise else None
        ids = await asyncio.gather(*(one(b) for b in bodies))
        if background is not None:
            await background
    return list(ids)


@pytest.mark.slow  # about 40 s of CPU: 256 seeded requests and the unseeded flood
def test_seeded_requests_get_the_same_ids_at_any_load(server, tiny_policy):
    bodies = _episodes(tiny_policy)
    alone = asyncio.run(_send(server.url, bodies, concurrency=1))
    crowded = asyncio.run(_send(server.url, bodies, concurrency=EPISODES))
    mixed = asyncio.run(_send(server.url, bodies, concurrency=EPISODES, noise=_noise(tiny_policy)))
    trickle = asyncio.run(_send(server.url, bodies, concurrency=1, noise=_noise(tiny_policy)))
    assert all(ids for ids in alone)
    assert len({tuple(ids) for ids in alone}) > EPISODES // 2  # really sampled, not greedy
    for name, got in (("64 at once", crowded), ("beside unseeded", mixed),
                      ("one at a time beside unseeded", trickle)):
        same = sum(a == b for a, b in zip(alone, got))
        assert same == EPISODES, f"{name}: {same} of {EPISODES} identical"


def test_a_lone_seeded_row_samples_from_its_own_seed(tiny_policy):
    """The engine's per-chunk seed reaches the policy as the row's own (one-row calls give
    `mix_seed(seed, 0)` on every backend), whether or not other rows share the round."""
    from envgym.agents.policies.server_engine import Engine, Row
    from envgym.policy import SamplingParams

    async def run(rows):
        engine = Engine(tiny_policy, chunk_tokens=4)
        task = asyncio.create_task(engine.run())
        engine.submit(rows)
        await asyncio.gather(*(r.future for r in rows))
        task.cancel()
        return [r.ids for r in rows]

    prompt = tiny_policy.chat.prompt_ids([{"role": "user", "content": "hello"}])

    def rows(seeds):
        return [Row(list(prompt), SamplingParams(max_tokens=8, seed=s)) for s in seeds]

    lone = asyncio.run(run(rows([7])))[0]
    together = asyncio.run(run(rows([3, 7, 11])))[1]
    longer = [Row(tiny_policy.chat.prompt_ids([{"role": "user", "content": "pad " * n}]),
                  SamplingParams(max_tokens=12)) for n in (5, 20, 40)]
    beside = asyncio.run(run(rows([7]) + longer))[0]
    assert lone == together == beside


def _episodes_ids(url: str, tiny_dir, concurrency: int) -> dict[int, list[list[int]]]:
    """64 seeded TimeSeries episodes through `openai:` against the server: ids per turn."""
    from envgym.agents.policies.openai import OpenAIPolicy
    from envgym.policy import SamplingParams
    from envgym.rollout import collect

    policy = OpenAIPolicy(url, "tiny", tokenizer=str(tiny_dir), mode="tokens",
                          concurrency=concurrency)
    trajs = collect("envgym/TimeSeries-v0", policy, episodes=EPISODES, seed=11,
                    env_kwargs={"series_length": 512, "sketch_points": 4, "zoom_points": 4,
                                "max_rounds": 1, "tool_format": "tag"},
                    sampling=SamplingParams(max_tokens=8, temperature=1.0),
                    concurrency=concurrency)
    assert all(t.error is None for t in trajs), [t.error for t in trajs if t.error][:2]
    return {t.seed: [turn.action_token_ids for turn in t.turns] for t in trajs}


@pytest.mark.slow  # minutes of CPU: three passes of 64 episodes, every seeded chunk re-prefilled
def test_seeded_episodes_are_identical_at_concurrency_1_and_64(server, tiny_policy, tiny_dir):
    import threading

    one = _episodes_ids(server.url, tiny_dir, 1)
    many = _episodes_ids(server.url, tiny_dir, EPISODES)
    stop = threading.Event()

    def flood() -> None:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            while not stop.is_set():
                for body in _noise(tiny_policy)[:4]:
                    client.post("/v1/completions", json=body)

    background = threading.Thread(target=flood, daemon=True)
    background.start()
    try:
        beside = _episodes_ids(server.url, tiny_dir, EPISODES)
    finally:
        stop.set()
        background.join(60)
    assert len(one) == EPISODES and sum(len(v) for v in one.values()) > EPISODES
    assert many == one
    assert beside == one

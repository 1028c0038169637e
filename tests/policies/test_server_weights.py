"""`serve-policy --allow-weight-sync`: `/v1/load_weights` swaps the served weights between
rounds, reports the version, and refuses what does not fit without touching the old ones."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import httpx
import pytest
import torch

from envgym.agents.policies.server import create_app
from envgym.agents.policies.server_engine import Engine, Row
from envgym.agents.policies.server_params import Limits
from envgym.agents.policies.server_weights import check_loopback, save_weights
from envgym.policy import Completion, SamplingParams

GREEDY = {"prompt": "hello there", "max_tokens": 8, "temperature": 0.0}


class _Served:
    """The app on a free loopback port in a thread of this process."""

    def __init__(self, app):
        from envgym.serving import make_server
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.server = make_server(app, host="127.0.0.1", port=port, shutdown_timeout=2)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.025)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def own_policy(tiny_dir):
    """A policy of this module's own: loading weights must not leak into other tests."""
    from envgym.policy import load_policy
    return load_policy(f"hf:{tiny_dir}", device="cpu", threads=1)


@pytest.fixture(scope="module")
def server(own_policy):
    limits = Limits(max_tokens=64, max_prompt_tokens=200, context=8192,
                    vocab=len(own_policy.tokenizer))
    s = _Served(create_app(own_policy, model_name="tiny", limits=limits, chunk_tokens=4,
                           allow_weight_sync=True))
    yield s
    s.close()


def _greedy(client: httpx.Client) -> dict:
    r = client.post("/v1/completions", json={"model": "tiny", **GREEDY})
    assert r.status_code == 200, r.text
    return r.json()["choices"][0]


def _perturbed(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {k: v + 0.5 * torch.randn(v.shape, generator=g) if v.is_floating_point() else v
            for k, v in model.state_dict().items()}


def test_load_weights_changes_the_served_outputs_and_reports_the_version(server, own_policy,
                                                                         tmp_path):
    original = {k: v.clone() for k, v in own_policy.model.state_dict().items()}
    with httpx.Client(base_url=server.url, timeout=30) as client:
        before = _greedy(client)
        assert before["envgym"]["policy_version"] == 0
        save_weights(_perturbed(own_policy.model), tmp_path / "v3", own_policy.model)
        r = client.post("/v1/load_weights", json={"path": str(tmp_path / "v3"), "version": 3})
        assert r.status_code == 200, r.text
        assert client.get("/health").json()["version"] == 3
        after = _greedy(client)
        assert after["token_ids"] != before["token_ids"]
        assert after["envgym"]["policy_version"] == 3
        assert after["envgym"]["policy_versions"] == [3]
        save_weights(original, tmp_path / "v4", own_policy.model)  # back: the same outputs
        r = client.post("/v1/load_weights",
                        json={"path": str(tmp_path / "v4" / "model.safetensors"), "version": 4})
        assert r.status_code == 200, r.text
        again = _greedy(client)
        assert again["token_ids"] == before["token_ids"]
        assert again["logprobs"]["token_logprobs"] == pytest.approx(
            before["logprobs"]["token_logprobs"], abs=1e-5)
        assert again["envgym"]["policy_version"] == 4


def test_a_bad_path_or_shape_is_a_400_and_the_old_weights_stay(server, own_policy, tmp_path):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        served = client.get("/health").json()["version"]
        before = _greedy(client)
        r = client.post("/v1/load_weights", json={"path": str(tmp_path / "nowhere"),
                                                   "version": 9})
        assert r.status_code == 400 and "no weights at" in r.json()["error"]["message"]
        bad = _perturbed(own_policy.model)
        name = next(k for k, v in bad.items() if v.dim() == 2)
        bad[name] = torch.zeros(bad[name].shape[0] + 1, bad[name].shape[1])
        save_weights(bad, tmp_path / "bad", own_policy.model)
        r = client.post("/v1/load_weights", json={"path": str(tmp_path / "bad"), "version": 9})
        assert r.status_code == 400
        assert "shape" in r.json()["error"]["message"] and name in r.json()["error"]["message"]
        (tmp_path / "junk").mkdir()
        (tmp_path / "junk" / "model.safetensors").write_bytes(b"not safetensors")
        r = client.post("/v1/load_weights", json={"path": str(tmp_path / "junk"), "version": 9})
        assert r.status_code == 400 and "cannot read" in r.json()["error"]["message"]
        r = client.post("/v1/load_weights", json={"path": str(tmp_path), "version": -1})
        assert r.status_code == 400 and r.json()["error"]["param"] == "version"
        assert client.get("/health").json()["version"] == served
        after = _greedy(client)
        assert after["token_ids"] == before["token_ids"]
        assert after["envgym"]["policy_version"] == served


def test_the_route_exists_only_when_allowed_and_only_on_loopback(own_policy):
    from fastapi.testclient import TestClient

    with TestClient(create_app(own_policy, model_name="tiny")) as client:
        assert client.post("/v1/load_weights", json={"path": "x", "version": 1}).status_code \
            == 404
    with TestClient(create_app(own_policy, model_name="tiny", allow_weight_sync=True),
                    client=("203.0.113.5", 5000)) as client:  # another machine
        r = client.post("/v1/load_weights", json={"path": "x", "version": 1})
        assert r.status_code == 403
    check_loopback("127.0.0.1")
    with pytest.raises(ValueError, match="loopback"):
        check_loopback("0.0.0.0")


class _Counter:
    """A policy that samples its weight as every token, one token a call; its first call
    blocks until released, so a load can be queued while a round is in flight."""

    per_row_sampling = True

    def __init__(self) -> None:
        self.weight, self.release = 0, threading.Event()

    def generate(self, prompts, sampling):
        self.release.wait(10)
        return [Completion("", [self.weight], [0.0], "length") for _ in prompts]

    def load_state_dict(self, state) -> None:
        self.weight = state["w"]


def test_a_row_spanning_a_load_keeps_going_and_records_both_versions():
    policy = _Counter()

    async def scenario() -> Row:
        engine = Engine(policy, chunk_tokens=1, decode=lambda ids: "")
        runner = asyncio.create_task(engine.run())
        row = Row([1, 2], SamplingParams(max_tokens=3, temperature=1.0))
        engine.submit([row])
        await asyncio.sleep(0.05)  # round 1 is in flight, blocked in generate
        load = asyncio.create_task(engine.load_weights(
            lambda: policy.load_state_dict({"w": 7}), 1))
        await asyncio.sleep(0.05)
        assert not load.done() and policy.weight == 0  # never mid-round
        policy.release.set()
        await asyncio.wait_for(row.future, 10)
        await load
        runner.cancel()
        return row

    row = asyncio.run(scenario())
    assert row.ids == [0, 7, 7]  # round 1 with the old weights, then the new ones
    assert row.versions == [0, 1]

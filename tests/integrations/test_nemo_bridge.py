"""nemo:URL against a resources server written to NeMo Gym's HTTP API in plain FastAPI
(examples/nemo/resources_server.py), in this process; test_nemo_gym_package.py runs the
same episode, audit and training against nemo-gym's own server."""

from __future__ import annotations

import importlib.util
import json
import math
import threading
import time
from pathlib import Path

import pytest
from envgym.integrations.imported import ImportedEnvError

from envgym.checker import check
from envgym.registration import make
from tests.integrations.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "nemo"
TASKS = str(EXAMPLE / "tasks.jsonl")


def _serve(app) -> str:
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def url() -> str:
    spec = importlib.util.spec_from_file_location("nemo_example_server",
                                                  EXAMPLE / "resources_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return _serve(module.app)


def _bad_server(reward, status: int = 200, delay: float = 0.0) -> str:
    from fastapi import FastAPI, Response

    app = FastAPI()

    @app.post("/seed_session")
    def seed() -> dict:
        return {}

    @app.post("/verify")
    def verify() -> Response:
        time.sleep(delay)
        return Response(json.dumps({"reward": reward}) if reward is not None else "<html>",
                        status_code=status, media_type="application/json")

    return _serve(app)


def test_tools_are_post_routes_and_verify_gives_the_reward_and_components(url):
    env = make(f"nemo:{url}", tasks=TASKS)
    try:
        obs, info = env.reset(seed=1)
        assert info["task_id"] == "arith-1" and '"name": "multiply"' in obs[0]["content"]
        a, b = (int(x) for x in obs[-1]["content"].rstrip("?").split()[-3::2])
        call = {"name": "multiply", "arguments": {"a": a, "b": b}}
        obs, *_ = env.step(f"<tool_call>{json.dumps(call)}</tool_call>")
        assert json.loads(obs[0]["content"]) == {"result": a * b}
        obs, *_ = env.step('<tool_call>{"name": "add", "arguments": {"a": "x"}}</tool_call>')
        assert obs[0]["content"].startswith("Error: invalid arguments")
        obs, reward, term, _, info = env.step(str(a * b))
        assert term and reward == 1.0 and info["reward_components"] == {"correct": 1.0}
    finally:
        env.close()


@pytest.mark.parametrize("reward,status,match", [
    (1.5, 200, "outside its declared range"), ("NaN", 200, "must be a number"),
    (None, 200, "non-JSON"), (1.0, 500, "HTTP 500")])
def test_a_bad_reward_or_broken_protocol_fails_the_episode(reward, status, match):
    env = make(f"nemo:{_bad_server(reward, status)}", tasks=TASKS)
    env.reset(seed=0)
    with pytest.raises(ImportedEnvError, match=match):
        env.step("7")


def test_a_hanging_verify_times_out():
    env = make(f"nemo:{_bad_server(1.0, delay=3)}", tasks=TASKS, timeout=0.5)
    env.reset(seed=0)
    with pytest.raises(ImportedEnvError, match="timeout"):
        env.step("7")


def test_check_plays_the_generic_adversaries(url):
    report = check(f"nemo:{url}", tasks=TASKS, hack_episodes=4)
    assert report.ok, report.render()
    assert "4 hacks stay under" in report.render()


def test_the_example_config_trains_two_steps(url, tmp_path, monkeypatch):
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train

    monkeypatch.chdir(ROOT)
    base = load_config(EXAMPLE / "train_tiny.toml").model_dump()
    base["envs"][0]["id"] = f"nemo:{url}"
    cfg = load_config({**base, "output_dir": str(tmp_path / "run")})
    train(cfg)
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    trained = [r for r in rows if "loss" in r]
    assert [r["step"] for r in trained] == [1, 2] and all(r["errors"] == 0 for r in trained)
    assert all(math.isfinite(r["loss"]) for r in trained)

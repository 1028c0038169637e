"""mcp:CMD_OR_URL imports an MCP tool server (the `mcp` package's own server API); `envgym
serve-env ID --mcp` exports an environment, driven by the `mcp` package's ClientSession."""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from envgym.integrations.imported import ImportedEnvError  # noqa: E402

from envgym.checker import check  # noqa: E402
from envgym.errors import InvalidConfig  # noqa: E402
from envgym.registration import make  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mcp"
SERVER = f"mcp:{sys.executable} {EXAMPLE / 'notes_server.py'}"
TASKS = str(EXAMPLE / "tasks.jsonl")


def _env(verifier, **kw):
    return make(SERVER, tasks=TASKS, verifier=verifier, **kw)


def _right_answer(env) -> str:
    return str(env._task["answer"])


def test_tools_run_over_mcp_and_the_answer_is_verified():
    env = _env(f"{EXAMPLE / 'verify.py'}:exact")
    try:
        obs, info = env.reset(seed=0)
        assert obs[0]["role"] == "system" and '"name": "add"' in obs[0]["content"]
        obs, reward, term, _, info = env.step(
            '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>')
        assert obs == [{"role": "tool", "name": "add", "content": "5"}] and not term
        obs, reward, term, _, info = env.step('<tool_call>{"name": "nope"}</tool_call>')
        assert info["reward_components"] == {"format": -0.1}
        assert "unknown tool" in info["parse_error"]
        obs, reward, term, _, info = env.step(_right_answer(env))
        assert term and reward == 1.0 and info["reward_components"] == {"correct": 1.0}
        assert info["outcome"]["success"]
    finally:
        env.close()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 1.5, -0.5, "1.0"])
def test_a_reward_that_is_not_finite_or_in_range_is_refused(bad):
    env = _env(lambda task, answer, ctx: bad)
    try:
        env.reset(seed=0)
        with pytest.raises(ImportedEnvError, match="refused|must be a number"):
            env.step("42")
    finally:
        env.close()


def test_a_wider_declared_range_is_accepted():
    env = _env(lambda task, answer, ctx: 1.5, reward_range=[0, 2])
    try:
        env.reset(seed=0)
        assert env.step("42")[1] == 1.5
    finally:
        env.close()


def test_a_verifier_that_hangs_or_raises_fails_the_episode_loudly():
    hang = _env(lambda task, answer, ctx: time.sleep(3) or 1.0, timeout=0.3)
    boom = _env(lambda task, answer, ctx: 1 / 0)
    try:
        hang.reset(seed=0)
        with pytest.raises(ImportedEnvError, match="timeout"):
            hang.step("42")
        boom.reset(seed=0)
        with pytest.raises(ImportedEnvError, match="ZeroDivisionError"):
            boom.step("42")
    finally:
        hang.close()
        boom.close()


def test_a_server_that_breaks_the_protocol_fails_loudly():
    with pytest.raises(ImportedEnvError, match="did not start"):
        make(f"mcp:{sys.executable} -c print('not-json-rpc')", tasks=TASKS,
             verifier=lambda t, a, c: 0.0, timeout=5)


def test_tasks_and_verifier_are_required_with_a_clear_error():
    with pytest.raises(InvalidConfig, match="tasks=FILE.jsonl and verifier"):
        make(SERVER)


def test_the_engine_records_a_refused_reward_as_a_failed_episode():
    from envgym.rollout import collect

    kwargs = {"tasks": TASKS, "verifier": lambda t, a, c: math.nan}
    trajs = collect(SERVER, "scripted:noop", episodes=2, seed=0, env_kwargs=kwargs)
    assert len(trajs) == 2 and all(t.error and "refused" in t.error for t in trajs)


def test_check_catches_the_planted_reward_file_hack_and_passes_the_sound_verifier():
    kwargs = {"tasks": TASKS, "hack_episodes": 3, "only": ["hacks"]}
    hacked = check(SERVER, verifier=f"{EXAMPLE / 'verify.py'}:reward_file", **kwargs)
    assert not hacked.ok
    assert "hack_verifier_inputs: BEATS" in hacked.render()
    sound = check(SERVER, verifier=f"{EXAMPLE / 'verify.py'}:exact", **kwargs)
    assert sound.ok, sound.render()


def test_the_config_validator_names_the_estimators_mcp_signals_support():
    from envgym.agents.config import load_config

    config = EXAMPLE / "train_tiny.toml"
    assert load_config(config).credit == ["turn"]
    with pytest.raises(InvalidConfig, match=r"cannot train with credit 'ifpo'.*support \['grpo', "
                                            r"'filter', 'turn', 'gigpo'\]"):
        load_config(config, credit=["grpo", "ifpo"])


def test_the_example_config_trains_two_steps(tmp_path, monkeypatch):
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train

    monkeypatch.chdir(ROOT)
    cfg = load_config(EXAMPLE / "train_tiny.toml", output_dir=str(tmp_path / "run"))
    train(cfg)
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    trained = [r for r in rows if "loss" in r]
    assert [r["step"] for r in trained] == [1, 2] and all(r["errors"] == 0 for r in trained)
    assert all(math.isfinite(r["loss"]) for r in trained)


def test_serve_env_mcp_is_driven_by_the_mcp_client_session():
    from mcp import ClientSession, StdioServerParameters, stdio_client

    async def drive() -> tuple[list[str], dict, dict]:
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "envgym.cli", "serve-env", "envgym/TimeSeries-v0", "--mcp"], cwd=str(ROOT))
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            opened = await session.call_tool("env_reset", {"seed": 3})
            zoom = await session.call_tool("timeseries_zoom_in_tool", {"ts_seg": [0, 40]})
            final = await session.call_tool("env_respond", {"text": "<answer>A</answer>"})
            assert not opened.is_error and "[user]" in opened.content[0].text
            return names, zoom.structured_content, final.structured_content

    names, zoom, final = asyncio.run(drive())
    assert names[:2] == ["env_reset", "env_respond"] and "timeseries_zoom_in_tool" in names
    assert zoom["done"] is False and "format" not in zoom["reward_components"]
    assert set(final) >= {"reward", "reward_components", "terminated", "outcome"}


def test_a_server_over_streamable_http_is_imported_and_verified(tmp_path):
    """`mcp:http://...`: the same episode as over stdio, against a server started apart."""
    import socket
    import subprocess

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(EXAMPLE / "notes_server.py"), "--http",
                             str(port)], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
        env = make(f"mcp:http://127.0.0.1:{port}/mcp", tasks=TASKS,
                   verifier=f"{EXAMPLE / 'verify.py'}:exact")
        try:
            obs, _ = env.reset(seed=0)
            assert '"name": "write_file"' in obs[0]["content"]
            obs, _, term, _, _ = env.step(
                '<tool_call>{"name": "multiply", "arguments": {"a": 6, "b": 7}}</tool_call>')
            assert obs == [{"role": "tool", "name": "multiply", "content": "42"}] and not term
            env.step('<tool_call>{"name": "write_file", "arguments": '
                     '{"path": "n.txt", "content": "hi"}}</tool_call>')
            assert (tmp_path / "n.txt").read_text() == "hi"  # the server's own directory
            _, reward, term, _, info = env.step(_right_answer(env))
            assert term and reward == 1.0 and info["outcome"]["success"]
        finally:
            env.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)

"""verifiers both ways, with verifiers' own API: `verifiers:ID` imports a taskset written
with it (examples/verifiers/vf_arith); `load_environment` exports an envgym environment
through verifiers' loader, scored by verifiers' `Task.score`."""

from __future__ import annotations

import asyncio
import json
import math
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("verifiers")

from envgym.integrations.imported import ImportedEnvError  # noqa: E402

from envgym.checker import check  # noqa: E402
from envgym.errors import InvalidConfig  # noqa: E402
from envgym.registration import make  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "verifiers"


@pytest.fixture(autouse=True)
def _tasksets_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))


def _bad_taskset(tmp_path: Path, monkeypatch, value: str) -> str:
    """A taskset package whose one reward returns `value` (written with verifiers' API)."""
    name = f"vf_bad_{abs(hash(value)) % 10_000}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text(textwrap.dedent(f"""
        import time
        import verifiers.v1 as vf

        class BadTask(vf.Task[vf.TaskData, vf.State, vf.TaskConfig]):
            @vf.reward
            async def points(self, trace) -> float:
                return {value}

        class BadTaskset(vf.Taskset[BadTask, vf.TasksetConfig]):
            def load(self):
                yield BadTask(vf.TaskData(id="only", prompt="Say hi."))

        __all__ = ["BadTaskset", "BadTask"]
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_a_taskset_becomes_a_text_env_with_its_named_rewards():
    env = make("verifiers:vf_arith", size=6)
    obs, info = env.reset(seed=1)
    assert [m["role"] for m in obs] == ["system", "user"] and info["task_id"] == "arith-1"
    answer = str(env._task.data.answer)
    _, reward, term, _, info = env.step(answer)
    assert term and info["reward_components"] == {"correct": 1.0, "brief": 0.1}
    assert reward == pytest.approx(1.1) and info["outcome"]["success"]
    env.reset(seed=1)
    assert env.step("no idea")[1] == 0.0


@pytest.mark.parametrize("value,match", [("float('nan')", "not finite"), ("2.0", "outside"),
                                         ("'high'", "raised TaskError"), ("1 / 0", "raised")])
def test_bad_rewards_and_raising_scorers_fail_the_episode(tmp_path, monkeypatch, value, match):
    env = make(f"verifiers:{_bad_taskset(tmp_path, monkeypatch, value)}")
    env.reset(seed=0)
    with pytest.raises(ImportedEnvError, match=match):
        env.step("hi")


def test_a_scorer_that_hangs_times_out(tmp_path, monkeypatch):
    env = make(f"verifiers:{_bad_taskset(tmp_path, monkeypatch, 'time.sleep(3) or 1.0')}",
               timeout=0.3)
    env.reset(seed=0)
    with pytest.raises(ImportedEnvError, match="timeout"):
        env.step("hi")


def test_an_unknown_taskset_is_a_clear_error():
    with pytest.raises(InvalidConfig, match="cannot load taskset 'no_such_taskset'"):
        make("verifiers:no_such_taskset")


def test_check_plays_the_generic_adversaries():
    report = check("verifiers:vf_arith", size=6, hack_episodes=6)
    assert report.ok, report.render()


def test_the_validator_names_what_a_one_reply_taskset_supports():
    from envgym.agents.config import load_config

    config = EXAMPLE / "train_tiny.toml"
    assert load_config(config).credit == ["grpo", "filter"]
    with pytest.raises(InvalidConfig, match="cannot train with credit 'gigpo'"):
        load_config(config, credit=["gigpo"])


def test_the_example_config_trains_two_steps(tmp_path, monkeypatch):
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train

    monkeypatch.chdir(ROOT)
    train(load_config(EXAMPLE / "train_tiny.toml", output_dir=str(tmp_path / "run")))
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    trained = [r for r in rows if "loss" in r]
    assert [r["step"] for r in trained] == [1, 2] and all(r["errors"] == 0 for r in trained)
    assert all(math.isfinite(r["loss"]) for r in trained)


def test_an_envgym_environment_loads_and_scores_as_a_verifiers_environment():
    import verifiers.v1 as vf
    from envgym.integrations.verifiers import load_environment
    from envgym.integrations.verifiers.export import EnvgymEnv, EnvgymTaskset

    env = load_environment("envgym/TimeSeries-v0", size=4, tool_format="tag")
    assert isinstance(env, EnvgymEnv) and isinstance(env, vf.Env)
    assert isinstance(env.taskset, EnvgymTaskset)
    tasks = list(env.taskset.take(2))
    assert [t.data.seed for t in tasks] == [0, 1]
    ours = make("envgym/TimeSeries-v0", tool_format="tag")
    opening, _ = ours.reset(seed=1)
    assert tasks[1].data.prompt[0].content == opening[-1]["content"]
    # an oracle episode played in envgym, as a verifiers trace scored by verifiers' own
    # Task.score, pays the episode's return, component by component
    from envgym.registration import load_entry_point, spec

    oracle = load_entry_point(spec("envgym/TimeSeries-v0").scripted["oracle"])(seed=1)
    messages, turns, totals, done = list(opening), [], {}, False
    while not done:
        action = oracle.act(ours, messages)
        obs, _, term, trunc, info = ours.step(action)
        turns.append((action, obs))
        messages += [{"role": "assistant", "content": action}, *obs]
        for k, v in info["reward_components"].items():
            totals[k] = totals.get(k, 0.0) + v
        done = term or trunc
    msgs = [vf.UserMessage(content=opening[-1]["content"])]
    for action, obs in turns:
        msgs.append(vf.AssistantMessage(content=action))
        msgs += [vf.UserMessage(content=m["content"]) for m in obs]
    nodes = [vf.MessageNode(parent=i - 1 if i else None, message=m, sampled=m.role == "assistant")
             for i, m in enumerate(msgs)]
    task = tasks[1]
    trace = vf.Trace(task=vf.TraceTask(type="EnvgymTask", data=task.data, key=task.key,
                                       hash=task.hash),
                     agent=vf.AgentInfo(config=vf.AgentConfig()), nodes=nodes)
    asyncio.run(task.score(trace))
    assert len(turns) >= 2
    assert {k: r.value for k, r in trace.rewards.items()} == pytest.approx(totals)
    assert trace.reward == pytest.approx(sum(totals.values())) and trace.reward > 0


def _uv_dir() -> str:
    """The folder with `uv`, which vf-eval's harnesses run their chat program with (a PEP 723
    script that `uv sync --script` sets up from the package index): this venv's (the
    `verifiers` extra installs it), else PATH's."""
    import shutil
    import sys

    here = Path(sys.executable).parent
    found = shutil.which("uv", path=str(here)) or shutil.which("uv")
    if not found:
        pytest.skip("vf-eval's harnesses need `uv` (pip install 'envgym[verifiers]' brings it)")
    return str(Path(found).parent)


def test_vf_eval_runs_an_envgym_environment_and_its_traces_carry_envgyms_rewards(
        tmp_path, tiny_model, envgym_cmd):
    """verifiers' own `vf-eval` finds the installed taskset package `envgym_export`, plays
    TimeSeries-v0 against `envgym serve-policy` on loopback (no Prime account: --no-push)
    with its `null` chat harness, and every trace's rewards are the environment's own reward
    components for the replies in that trace, replayed here in a fresh environment."""
    import os
    import subprocess
    import sys
    import time

    import httpx

    from tests.integrations.conftest import free_port

    vf_eval = Path(sys.executable).parent / "vf-eval"
    assert vf_eval.is_file(), "the verifiers extra installs vf-eval beside this Python"
    port = free_port()
    log = tmp_path / "serve-policy.log"
    with open(log, "w") as sink:
        server = subprocess.Popen([*envgym_cmd, "serve-policy", f"hf:{tiny_model}", "--port",
                                   str(port)], stdout=sink, stderr=subprocess.STDOUT,
                                  env={**os.environ, "OMP_NUM_THREADS": "1"})
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        env = {**os.environ, "PATH": f"{_uv_dir()}{os.pathsep}{os.environ.get('PATH', '')}",
               "OMP_NUM_THREADS": "1"}
        out = subprocess.run(
            [str(vf_eval), "envgym-export", "--env.taskset.env-id", "envgym/TimeSeries-v0",
             "--env.taskset.size", "3", "-m", str(tiny_model), "--client.base-url",
             f"{base}/v1", "--sampling.max-tokens", "16", "--no-push", "--no-rich",
             "-o", str(tmp_path / "out")],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (traces_file,) = (tmp_path / "out").glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces_file.read_text().splitlines()]
    assert sorted(e["task"]["data"]["seed"] for e in episodes) == [0, 1, 2]
    for episode in episodes:
        assert episode["ok"] and not episode["errors"], episode["errors"]
        (trace,) = episode["traces"]
        assert trace["agent"]["config"]["harness"]["id"] == "null"
        replies = [n["message"]["content"] for n in trace["nodes"]
                   if n["message"]["role"] == "assistant"]
        assert replies, "the model was never called"
        ours = make("envgym/TimeSeries-v0")
        ours.reset(seed=episode["task"]["data"]["seed"])
        totals: dict[str, float] = {}
        for reply in replies:
            _, _, term, trunc, info = ours.step(reply)
            for name, value in info["reward_components"].items():
                totals[name] = totals.get(name, 0.0) + value
            if term or trunc:
                break
        got = {name: r["score"] for name, r in trace["rewards"].items()}
        assert totals and got == pytest.approx(totals)

"""nemo:URL against a resources server written with the `nemo-gym` package itself
(examples/nemo/nemo_gym_server.py: `SimpleResourcesServer`, started by its own
`run_webserver()`).

nemo-gym needs Python >= 3.12 and envgym's venvs may be older, so the server runs as a child
process under the interpreter `ENVGYM_NEMO_PYTHON` names (default: `.venv-nemo/bin/python`
in the repository root, which `.ci/run` builds with python3.12). Without one the tests skip
and say how to make it; the test process itself only speaks HTTP to the server.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integrations.conftest import envgym_command, free_port

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "nemo"
TASKS = str(EXAMPLE / "tasks.jsonl")
SETUP = ("python3.12 -m venv .venv-nemo && .venv-nemo/bin/pip install nemo-gym "
         "(or set ENVGYM_NEMO_PYTHON to a Python >= 3.12 that has nemo-gym)")


def nemo_python() -> str:
    """The interpreter with nemo-gym: ENVGYM_NEMO_PYTHON, else the repository's .venv-nemo.
    A named one that is missing is an error; an absent default is a skip."""
    named = os.environ.get("ENVGYM_NEMO_PYTHON")
    if named:
        if not Path(named).is_file():
            pytest.fail(f"ENVGYM_NEMO_PYTHON={named} does not exist; {SETUP}")
        return named
    default = ROOT / ".venv-nemo" / "bin" / "python"
    if not default.is_file():
        pytest.skip(f"no nemo-gym server venv: ENVGYM_NEMO_PYTHON unset and {default} "
                    f"absent; {SETUP}")
    return str(default)


def _healthy(url: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{url}/", timeout=2).json() == {"status": "ok"}
    except (httpx.HTTPError, ValueError):
        return False


@contextlib.contextmanager
def served(log: Path, *args: str) -> Iterator[str]:
    """`examples/nemo/nemo_gym_server.py ARGS` on a free loopback port, as NeMo Gym starts a
    server (a Ray cluster included: about 20 s); yields its URL."""
    python = nemo_python()
    port = free_port()
    with open(log, "w") as sink:
        proc = subprocess.Popen([python, str(EXAMPLE / "nemo_gym_server.py"), "--port",
                                 str(port), *args], stdout=sink, stderr=subprocess.STDOUT,
                                cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    address = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while not _healthy(address):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the nemo-gym server did not start (exit {proc.poll()}):\n"
                            f"{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield address
    finally:
        proc.terminate()  # uvicorn stops, then NeMo Gym's atexit shuts its Ray cluster down
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> Iterator[str]:
    """The example arithmetic server, written with nemo-gym's API."""
    with served(tmp_path_factory.mktemp("nemo") / "server.log") as address:
        yield address


def test_the_server_is_nemo_gyms_own_class(url):
    """Not our FastAPI stand-in: NeMo Gym's session middleware sets its signed cookie."""
    import httpx

    reply = httpx.post(f"{url}/seed_session", json={"expected_answer": 3})
    assert reply.status_code == 200
    assert "ArithResourcesServer___" in reply.headers.get("set-cookie", "")


def test_an_episode_calls_tools_and_verify_pays_the_components(url):
    from envgym.registration import make

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
        env.reset(seed=1)
        _, reward, term, _, info = env.step(str(a * b + 1))
        assert term and reward == 0.0 and info["reward_components"] == {"correct": 0.0}
    finally:
        env.close()


def test_envgym_check_audits_it(url):
    out = subprocess.run(
        [*envgym_command(), "check", f"nemo:{url}", "--env-arg", f"tasks={TASKS}",
         "--hack-episodes", "4", "--adversary-episodes", "4"],
        capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "4 hacks stay under" in out.stdout


def test_envgym_train_runs_two_steps_on_it(url, tmp_path):
    text = (EXAMPLE / "train_tiny.toml").read_text()
    assert 'id = "nemo:http://127.0.0.1:8011"' in text
    config = tmp_path / "train.toml"
    config.write_text(text.replace("http://127.0.0.1:8011", url).replace(
        'output_dir = "runs/nemo_tiny"', f'output_dir = "{tmp_path / "run"}"'))
    out = subprocess.run([*envgym_command(), "train", str(config)], capture_output=True,
                         text=True, cwd=ROOT, timeout=600,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    trained = [r for r in rows if "loss" in r]
    assert [r["step"] for r in trained] == [1, 2] and all(r["errors"] == 0 for r in trained)
    assert all(math.isfinite(r["loss"]) for r in trained)


def test_a_server_nemo_gym_ships_keeps_state_per_session(tmp_path):
    """nemo-gym's own `example_session_state_mgmt` server with its own example rows: a
    counter kept under NeMo Gym's session cookie, which verify checks. The tool calls of an
    episode share one session, and each episode starts a new one."""
    python = nemo_python()
    package = subprocess.run([python, "-c", "import resources_servers as r; print(r.__path__[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    tasks = Path(package) / "example_session_state_mgmt" / "data" / "example.jsonl"
    row = json.loads(tasks.read_text().splitlines()[0])
    assert (row["initial_count"], row["expected_count"]) == (3, 6)  # "add 1 then add 2"
    server = ("resources_servers.example_session_state_mgmt.app:"
              "StatefulCounterResourcesServer")
    from envgym.registration import make

    def call(name: str, **arguments: int) -> str:
        return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"

    with served(tmp_path / "server.log", "--server", server, "--domain", "agent") as address:
        env = make(f"nemo:{address}", tasks=str(tasks))
        try:
            for _ in range(2):  # the second episode would start at 6 if it kept the session
                env.reset(seed=0)
                env.step(call("increment_counter", count=1))
                env.step(call("increment_counter", count=2))
                obs, *_ = env.step(call("get_counter_value"))
                assert json.loads(obs[0]["content"]) == {"count": 6}
                _, reward, term, _, _ = env.step("6")
                assert term and reward == 1.0
            env.reset(seed=0)
            env.step(call("increment_counter", count=1))
            _, reward, term, _, _ = env.step("6")  # the count is 4: the answer text is not read
            assert term and reward == 0.0
        finally:
            env.close()

"""`envgym serve-env` driven by openenv-core's own client, and `openenv:URL` against it.

Every comparison is with the same environment in-process, same seed, same actions.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import httpx
import pytest

pytest.importorskip("openenv", reason="the `openenv` extra is not installed "
                    "(pip install 'envgym[openenv]')")

from openenv.core.generic_client import GenericEnvClient  # noqa: E402

import envgym  # noqa: E402

ENV = "envgym/TimeSeries-v0"
http = httpx.Client(timeout=60)  # two shared CPU cores: a busy server is slow, not broken
ZOOM = ('<think>look</think><tool_call>{"name": "timeseries_zoom_in_tool", '
        '"arguments": {"ts_seg": [0, 200]}}</tool_call>')
SCRIPT = ["no tool call here", ZOOM, "<answer>ACCEPT</answer>", "<answer>B</answer>"]


def jsonable(x):
    return json.loads(json.dumps(x, default=lambda v: v.item() if hasattr(v, "item") else str(v)))


def local_episode(seed: int, actions: list[str]) -> list[tuple]:
    env = envgym.make(ENV)
    try:
        out = [jsonable(env.reset(seed=seed))]
        for a in actions:
            step = env.step(a)
            out.append(jsonable(step))
            if step[2] or step[3]:
                break
        return out
    finally:
        env.close()


# ---- the server, through openenv-core's client ----------------------------------------------


def test_openenv_runtime_validator_passes(served_timeseries):
    from openenv.cli._validation import validate_running_environment

    report = validate_running_environment(served_timeseries)
    assert report["passed"], report["criteria"]


@pytest.mark.parametrize("seed", [0, 7])
def test_episode_through_openenv_client_equals_in_process(served_timeseries, seed):
    expected = local_episode(seed, SCRIPT)
    with GenericEnvClient(base_url=served_timeseries).sync() as client:
        first = client.reset(seed=seed)
        obs0, info0 = expected[0]
        assert first.observation["messages"] == obs0 and first.observation["info"] == info0
        assert first.done is False
        for action, (obs, reward, term, trunc, info) in zip(SCRIPT, expected[1:]):
            r = client.step({"content": action})
            assert r.observation["messages"] == obs
            assert r.reward == reward and r.observation["reward_components"] == info["reward_components"]
            assert (r.observation["terminated"], r.observation["truncated"]) == (term, trunc)
            assert r.done == (term or trunc)
            assert r.observation["info"] == info
    assert expected[-1][2], "the script must end the episode"


def test_schema_and_mcp_list_the_tools(served_timeseries):
    schema = http.get(f"{served_timeseries}/schema").json()
    names = [t["function"]["name"] for t in schema["action"]["tools"]]
    env = envgym.make(ENV)
    assert names == [t["function"]["name"] for t in env.tool_schemas()]
    assert schema["action"]["required"] == ["content"]
    assert "reward_components" in schema["observation"]["properties"]
    rpc = http.post(f"{served_timeseries}/mcp",
                     json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).json()
    assert [t["name"] for t in rpc["result"]["tools"]] == names
    assert rpc["result"]["tools"][0]["inputSchema"]["properties"]


def test_eight_concurrent_sessions_and_the_cap(served_timeseries):
    results, errors = {}, []

    def episode(seed: int, barrier: threading.Barrier) -> None:
        try:
            with GenericEnvClient(base_url=served_timeseries).sync() as client:
                client.reset(seed=seed)
                barrier.wait(timeout=60)  # all 8 sessions are open at once here
                steps = [client.step({"content": a}) for a in SCRIPT]
                results[seed] = [(s.observation["messages"], s.reward, s.done) for s in steps]
                barrier.wait(timeout=60)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    barrier = threading.Barrier(9)
    threads = [threading.Thread(target=episode, args=(s, barrier)) for s in range(8)]
    for t in threads:
        t.start()
    barrier.wait(timeout=120)
    from websockets.sync.client import connect

    with connect(served_timeseries.replace("http", "ws") + "/ws") as ninth:  # refused, and told
        refusal = json.loads(ninth.recv(timeout=30))
    assert refusal["type"] == "error" and refusal["data"]["code"] == "CAPACITY_REACHED"
    barrier.wait(timeout=120)
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    for seed, steps in results.items():
        expected = local_episode(seed, SCRIPT)[1:]
        assert steps == [(o, r, t or u) for o, r, t, u, _ in expected]
    _eventually(lambda: _can_reset(served_timeseries), 20)  # slots come back


def test_malformed_requests_get_errors_and_the_server_keeps_answering(served_timeseries):
    from websockets.sync.client import connect

    ws_url = served_timeseries.replace("http", "ws") + "/ws"
    with connect(ws_url, max_size=None) as ws:
        def send(raw: str) -> dict:
            ws.send(raw)
            return json.loads(ws.recv(timeout=60))

        assert send("{not json")["data"]["code"] == "INVALID_JSON"
        deep = '{"type": "step", "data": {"content": %s"x"%s}}' % ("[" * 50_000, "]" * 50_000)
        for frame in (deep, "[" * 50_000 + "]" * 50_000):  # past the parser's recursion limit
            assert send(frame)["data"]["code"] == "INVALID_JSON"  # not SESSION_ERROR
        early = send(json.dumps({"type": "step", "data": {"content": "hi"}}))
        assert early["type"] == "error" and "before reset" in early["data"]["message"]
        assert send(json.dumps({"type": "bogus"}))["data"]["code"] == "UNKNOWN_TYPE"
        assert send(json.dumps({"type": "reset", "data": {"seed": -3}}))["type"] == "error"
        assert send(json.dumps({"type": "reset", "data": {"seed": 1}}))["type"] == "observation"
        huge = send(json.dumps({"type": "step", "data": {"content": "x" * 1_000_000}}))
        assert huge["data"]["code"] == "VALIDATION_ERROR"
        extra = send(json.dumps({"type": "step", "data": {"content": "a", "surprise": 1}}))
        assert extra["data"]["code"] == "VALIDATION_ERROR"
        ok = send(json.dumps({"type": "step", "data": {"content": ZOOM}}))  # the session lives on
        assert ok["type"] == "observation" and ok["data"]["observation"]["info"]["turn"] == 1
    # stateless HTTP: a bare /step is before reset; bad JSON and unknown sessions are errors
    r = http.post(f"{served_timeseries}/step", json={"action": {"content": "hi"}})
    assert r.status_code == 409 and "reset" in r.json()["detail"]
    r = http.post(f"{served_timeseries}/reset", content=b"{oops",
                   headers={"content-type": "application/json"})
    assert r.status_code == 422
    r = http.post(f"{served_timeseries}/step", json={"action": {"content": "x" * 1_000_000}})
    assert r.status_code == 422
    rpc = http.post(f"{served_timeseries}/mcp", json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"session_id": "no-such"}})
    assert "Unknown session_id" in rpc.json()["error"]["message"]
    assert http.get(f"{served_timeseries}/health").json()["status"] == "healthy"
    assert _can_reset(served_timeseries)


# ---- dropped clients never hold a slot --------------------------------------------------------


def _one_slot_server(thread_server, idle_timeout: float, ping: float | None = None):
    from envgym.integrations.openenv.server import ServerConfig, build_app

    app = build_app(ServerConfig(ENV, {}, max_sessions=1, idle_timeout=idle_timeout))
    options = {"ws_ping_interval": ping, "ws_ping_timeout": ping} if ping else {}
    return thread_server(app, **options)


def _can_reset(url: str) -> bool:
    try:
        with GenericEnvClient(base_url=url, message_timeout_s=30).sync() as client:
            return client.reset(seed=0).done is False
    except Exception:  # noqa: BLE001 - refused: CAPACITY_REACHED, or closed on connect
        return False


def _eventually(check, timeout: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        time.sleep(0.5)
    raise AssertionError(f"not within {timeout}s")


def test_killing_a_client_mid_episode_frees_its_slot(thread_server):
    server = _one_slot_server(thread_server, idle_timeout=600)
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from openenv.core.generic_client import GenericEnvClient
        c = GenericEnvClient(base_url="{server.url}").sync(); c.connect()
        c.reset(seed=2); c.step({{"content": "hello"}})
        print("mid-episode", flush=True)
        import time; time.sleep(600)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "mid-episode"
        assert not _can_reset(server.url)  # the one slot is taken
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        _eventually(lambda: _can_reset(server.url), 15)
    finally:
        child.kill()


def test_half_open_connection_is_reaped(thread_server):
    """A peer that vanished without closing TCP (no FIN, no pong) is dropped by the pings."""
    server = _one_slot_server(thread_server, idle_timeout=600, ping=2.0)
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    assert b"101" in sock.recv(4096).split(b"\r\n")[0]
    try:
        assert not _can_reset(server.url)  # the silent peer holds the one slot
        # the socket stays open but never answers a ping: the slot must come back
        _eventually(lambda: _can_reset(server.url), 30)
    finally:
        sock.close()


def test_idle_session_is_reaped_and_then_refuses_steps(thread_server):
    from websockets.sync.client import connect

    server = _one_slot_server(thread_server, idle_timeout=1.0)
    with connect(server.url.replace("http", "ws") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        _eventually(lambda: _can_reset(server.url), 20)  # reaped while the client idles
        ws.send(json.dumps({"type": "step", "data": {"content": ZOOM}}))
        reply = json.loads(ws.recv(timeout=30))
        assert reply["type"] == "error" and "closed" in reply["data"]["message"]


# ---- openenv:URL ------------------------------------------------------------------------------


ACTIONS = [ZOOM, "garbage <tool_call>{bad json</tool_call>", "<answer>ACCEPT</answer>",
           "<answer>Z</answer>", "<answer>A</answer>"]  # valid, invalid, valid, invalid, final


@pytest.mark.parametrize("seed", [0, 3, 11])
def test_openenv_url_round_trips_an_episode_exactly(served_timeseries, seed):
    remote = envgym.make(f"openenv:{served_timeseries}")
    try:
        assert jsonable(remote.reset(seed=seed)) == local_episode(seed, [])[0]
        got = [jsonable(remote.reset(seed=seed))]  # a second reset starts over, identically
        for a in ACTIONS:
            step = remote.step(a)
            got.append(jsonable(step))
            if step[2] or step[3]:
                break
        assert got == local_episode(seed, ACTIONS)
        assert got[-1][2] is True
    finally:
        remote.close()


def test_openenv_url_episode_of_invalid_actions_ends_identically(served_timeseries):
    bad = ["junk"] * 9
    remote = envgym.make(f"openenv:{served_timeseries}")
    try:
        got = [jsonable(remote.reset(seed=4))]
        for a in bad:
            step = remote.step(a)
            got.append(jsonable(step))
            if step[2] or step[3]:
                break
    finally:
        remote.close()
    expected = local_episode(4, bad)
    assert got == expected and (expected[-1][2] or expected[-1][3])  # it ended, as in-process
    assert got[-1][4]["outcome"]["gave_up"] is True


def test_envgym_openenv_v0_with_url_and_tools(served_timeseries):
    remote = envgym.make("envgym/OpenEnv-v0", url=served_timeseries)
    try:
        remote.reset(seed=1)
        assert [t["function"]["name"] for t in remote.tool_schemas()] == \
            [t["function"]["name"] for t in envgym.make(ENV).tool_schemas()]
        twin = remote.fork()  # replayed in a new session
        assert jsonable(twin.step(ZOOM)) == jsonable(remote.step(ZOOM))
        twin.close()
    finally:
        remote.close()


def test_remote_state_is_a_clear_error_not_an_attribute_error(served_timeseries, envgym_cmd):
    from envgym.integrations.openenv.client import RemoteStateUnavailable

    remote = envgym.make(f"openenv:{served_timeseries}")
    try:
        with pytest.raises(RemoteStateUnavailable, match="scripted baselines"):
            remote.task  # noqa: B018
        assert getattr(remote, "answering", "absent") == "absent"  # getattr defaults still work
    finally:
        remote.close()
    run = subprocess.run([*envgym_cmd, "eval", "--env", f"openenv:{served_timeseries}",
                          "--policy", "scripted:oracle", "--episodes", "2", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert "cannot run on" in run.stderr and "internal state" in run.stderr
    assert "Traceback" not in run.stderr and "AttributeError" not in run.stderr


def test_engine_runs_eight_episodes_through_openenv_url(served_timeseries, tiny_model):
    from envgym.policy import SamplingParams, load_policy
    from envgym.rollout import collect

    policy = load_policy(f"hf:{tiny_model}", device="cpu", threads=1)
    trajs = collect(f"openenv:{served_timeseries}", policy, episodes=8, seed=100,
                    sampling=SamplingParams(max_tokens=8, seed=0))
    assert len(trajs) == 8 and all(t.error is None for t in trajs), [t.error for t in trajs]
    assert all(t.terminated or t.truncated for t in trajs)
    for t in trajs:  # the engine's tokens stayed exact: masks cover the sampled ids only
        ids, mask, _ = t.token_sequence()
        assert sum(mask) == sum(len(turn.action_token_ids) for turn in t.turns) > 0


def test_network_failure_is_a_failed_episode_not_a_crash(thread_server):
    from envgym.integrations.openenv.server import ServerConfig, build_app
    from envgym.rollout import collect

    server = thread_server(build_app(ServerConfig(ENV, {}, max_sessions=4)))
    url = server.url

    class DiesAfterReset:
        """A scripted policy that takes the server down before its first step lands."""

        def __init__(self, seed: int = 0):
            pass

        def act(self, env, messages):
            server.stop()
            return ZOOM

    trajs = collect(f"openenv:{url}", DiesAfterReset, episodes=2, step_timeout=60)
    assert len(trajs) == 2 and all(t.error and "RemoteEnvError" in t.error for t in trajs)
    assert all(t.outcome == {"success": False, "score": 0.0} for t in trajs)
    dead = collect(f"openenv:{url}", DiesAfterReset, episodes=1, step_timeout=60)
    assert "RemoteEnvError" in dead[0].error and "schema" in dead[0].error


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_eval_cli_through_openenv_url(served_timeseries, tiny_model, envgym_cmd):
    """The CLI check, verbatim: 2 min on two quiet cores, 7.5 min on two busy ones."""
    run = subprocess.run([*envgym_cmd, "eval", "--env", f"openenv:{served_timeseries}",
                          "--policy", f"hf:{tiny_model}", "--episodes", "8", "--json"],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["errors"] == 0 and result["completed"] == 8


# ---- any OpenEnv server, and publishing --------------------------------------------------------


def test_openenv_url_wraps_a_non_envgym_server(thread_server):
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State

    class Guess(Action):
        guess: str

    class Feedback(Observation):
        hint: str = ""

    class Higher(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def reset(self, seed=None, episode_id=None, **_):
            self.target, self.n = str((seed or 0) % 10), 0
            return Feedback(hint="guess a digit")

        def step(self, action, timeout_s=None, **_):
            self.n += 1
            right = action.guess.strip() == self.target
            return Feedback(hint="right" if right else "wrong", reward=1.0 if right else 0.0,
                            done=right or self.n >= 3)

        @property
        def state(self):
            return State(step_count=getattr(self, "n", 0))

    server = thread_server(create_app(Higher, Guess, Feedback, max_concurrent_envs=2))
    env = envgym.make(f"openenv:{server.url}")
    try:
        obs, info = env.reset(seed=13)
        assert obs == [{"role": "user", "content": "guess a digit"}]
        assert env.action_field == "guess"
        _, r, term, trunc, info = env.step("1")
        assert (r, term, trunc, info["reward_components"]) == (0.0, False, False, {"env": 0.0})
        _, r, term, _, info = env.step("3")
        assert (r, term) == (1.0, True) and info["reward_components"] == {"env": 1.0}
    finally:
        env.close()


def test_package_writes_a_manifest_and_dockerfile(tmp_path):
    import yaml

    from envgym.integrations.openenv.app import config_from_environ
    from envgym.integrations.openenv.package import write_package

    files = write_package(ENV, tmp_path, {"series_length": 512})
    assert sorted(p.name for p in files) == ["Dockerfile", "README.md", "openenv.yaml"]
    manifest = yaml.safe_load((tmp_path / "openenv.yaml").read_text())
    assert manifest["spec_version"] == 1 and manifest["runtime"] == "fastapi"
    assert manifest["name"] == "timeseries_v0_env" and manifest["port"] == 8000
    module, _, attr = manifest["app"].partition(":")
    assert module == "envgym.integrations.openenv.app" and attr == "app"
    docker = (tmp_path / "Dockerfile").read_text()
    assert 'ENVGYM_ENV_ID="envgym/TimeSeries-v0"' in docker and "/health" in docker
    env_args = docker.split("ENVGYM_ENV_ARGS=")[1].split(" ENVGYM_MAX")[0]
    config = config_from_environ({"ENVGYM_ENV_ID": ENV, "ENVGYM_ENV_ARGS": json.loads(env_args)})
    assert config.env_kwargs == {"series_length": 512}
    from envgym.errors import InvalidConfig
    with pytest.raises(InvalidConfig, match="ENVGYM_ENV_ID"):
        config_from_environ({})


def test_serve_env_refuses_unknown_ids_and_bad_env_args(envgym_cmd):
    from envgym.errors import EnvGymError
    from envgym.integrations.openenv.server import ServerConfig, build_app

    run = subprocess.run([*envgym_cmd, "serve-env", "envgym/TimeSerie-v0"], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 2 and "TimeSeries-v0" in run.stderr  # the close match is named
    with pytest.raises(EnvGymError, match="series_length"):
        build_app(ServerConfig(ENV, {"series_length": 3}))
    with pytest.raises(EnvGymError, match="no_such_option"):
        build_app(ServerConfig(ENV, {"no_such_option": 1}))


def test_multi_agent_environment_over_openenv(thread_server):
    from envgym.integrations.openenv.server import ServerConfig, build_app

    server = thread_server(build_app(ServerConfig("envgym/Debate-v0", {}, max_sessions=2)))
    local = envgym.make("envgym/Debate-v0")
    local_obs, _ = local.reset(seed=5)
    with GenericEnvClient(base_url=server.url).sync() as client:
        first = client.reset(seed=5)
        assert first.observation["messages"] == jsonable(local_obs)
        actions = {a: "The answer is \\boxed{4}." for a in first.observation["agents"]}
        r = client.step({"actions": actions})
        expected = local.step(actions)
        assert r.observation["rewards"] == jsonable(expected[1])
        assert r.observation["messages"] == jsonable(expected[0])
    with pytest.raises(envgym.EnvGymError, match="multi-agent"):
        envgym.make(f"openenv:{server.url}")


def test_checker_passes_on_an_openenv_url(served_timeseries):
    """gymnasium's check_env, determinism, the 54-action fuzz, fork and close, over the wire."""
    from envgym.checker import check

    report = check(f"openenv:{served_timeseries}")
    assert report.ok, report.render()
    # the generic adversaries need the in-process baseline: the report says they did not run
    detail = dict((name, d) for name, _, d in report.results)["adversaries"]
    assert "remote environment" in detail and "no generic adversary ran" in detail


def test_unencodable_text_does_not_kill_the_session(served_timeseries):
    with GenericEnvClient(base_url=served_timeseries).sync() as client:
        client.reset(seed=2)
        r = client.step({"content": "\ud800<answer>\udfff</answer>"})  # lone surrogates
        assert r.observation["info"]["turn"] == 1
        assert client.step({"content": ZOOM}).observation["info"]["turn"] == 2


def test_a_full_server_is_waited_on_not_failed(thread_server):
    server = _one_slot_server(thread_server, idle_timeout=600)
    holder = envgym.make(f"openenv:{server.url}")
    holder.reset(seed=0)
    impatient = envgym.make(f"openenv:{server.url}", capacity_wait=0)
    with pytest.raises(envgym.EnvGymError, match="CAPACITY_REACHED|ConnectionClosed"):
        impatient.reset(seed=1)
    impatient.close()
    threading.Timer(1.5, holder.close).start()  # the slot frees up while the next one waits
    waiting = envgym.make(f"openenv:{server.url}", capacity_wait=60)
    started = time.monotonic()
    obs, _ = waiting.reset(seed=1)
    assert obs and time.monotonic() - started >= 1.0
    waiting.close()


def test_the_published_image_entrypoint_serves(tmp_path):
    """The Dockerfile's CMD (uvicorn on the app module, configured by ENVGYM_* variables)."""
    import os

    from tests.integrations.conftest import free_port, wait_healthy

    port, log = free_port(), tmp_path / "app.log"
    env = {**os.environ, "ENVGYM_ENV_ID": ENV, "ENVGYM_ENV_ARGS": '{"max_rounds": 2}',
           "ENVGYM_MAX_SESSIONS": "2"}
    with open(log, "w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "envgym.integrations.openenv.app:app",
                                 "--host", "127.0.0.1", "--port", str(port)],
                                stdout=sink, stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc=proc, log=log)
        assert http.get(f"{url}/metadata").json()["name"] == ENV
        remote = envgym.make(f"openenv:{url}")
        try:
            expected = envgym.make(ENV, max_rounds=2)
            assert jsonable(remote.reset(seed=9)) == jsonable(expected.reset(seed=9))
        finally:
            remote.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


# ---- serve-env under faults: health, frames, echoes, normal closes, SIGTERM -------------------


def test_health_counts_sessions_and_is_503_when_full(thread_server):
    from websockets.sync.client import connect

    server = _one_slot_server(thread_server, idle_timeout=600)
    idle = http.get(f"{server.url}/health")
    assert idle.status_code == 200 and idle.json()["sessions"] == {"active": 0, "max": 1}
    with connect(server.url.replace("http", "ws") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
        full = http.get(f"{server.url}/health")
        assert full.status_code == 503
        assert full.json() == {"status": "full", "sessions": {"active": 1, "max": 1}}
    _eventually(lambda: http.get(f"{server.url}/health").status_code == 200, 20)
    assert _can_reset(server.url)


def test_binary_and_non_object_frames_get_a_clear_error_and_the_session_lives(thread_server):
    from websockets.sync.client import connect

    server = _one_slot_server(thread_server, idle_timeout=600)
    with connect(server.url.replace("http", "ws") + "/ws", max_size=None) as ws:
        def send(raw) -> dict:
            ws.send(raw)
            return json.loads(ws.recv(timeout=60))

        binary = send(b"\x00\x01{}")
        assert binary["data"]["code"] == "INVALID_FRAME" and "binary" in binary["data"]["message"]
        for raw, kind in (("[1, 2]", "list"), ('"reset"', "str"), ("7", "int")):
            error = send(raw)["data"]
            assert error["code"] == "INVALID_FRAME" and f"JSON {kind}" in error["message"]
        assert send(json.dumps({"type": "reset", "data": {"seed": 1}}))["type"] == "observation"
        huge = send(json.dumps({"type": "step", "data": {"content": "x" * 1_000_000}}))
        assert huge["data"]["code"] == "VALIDATION_ERROR"
        echoed = json.dumps(huge)
        assert len(echoed) < 5_000 and "[1000000 chars]" in echoed
        assert send(json.dumps({"type": "step", "data": {"content": ZOOM}}))["type"] == "observation"
    r = http.post(f"{server.url}/step", json={"action": {"content": "x" * 1_000_000}})
    assert r.status_code == 422 and len(r.text) < 5_000 and "[1000000 chars]" in r.text
    assert http.get(f"{server.url}/health").status_code == 200


def test_normal_session_ends_log_no_traceback(thread_server):
    import logging

    from websockets.sync.client import connect

    server = _one_slot_server(thread_server, idle_timeout=600)
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("uvicorn.error")  # after uvicorn configured its logging
    logger.addHandler(handler)
    try:
        for ending in ("close message", "close message, no wait", "socket close") * 3:
            ws = connect(server.url.replace("http", "ws") + "/ws")
            ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
            ws.recv(timeout=60)
            if ending.startswith("close message"):
                ws.send(json.dumps({"type": "close", "data": {}}))
                if ending == "close message":
                    time.sleep(0.1)
            ws.close()
            _eventually(lambda: http.get(f"{server.url}/health").status_code == 200, 20)
        time.sleep(0.3)
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in records if r.levelno >= logging.ERROR] == []


def test_package_of_a_plugin_environment_installs_the_plugin(tmp_path, monkeypatch):
    from envgym.errors import InvalidConfig
    from envgym.integrations.openenv.package import write_package
    from envgym.registration import _REGISTRY, register

    site = tmp_path / "site"
    (site / "plugtest_envs").mkdir(parents=True)
    (site / "plugtest_envs" / "__init__.py").write_text("")
    meta = site / "plugtest_envs-1.2.3.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: plugtest-envs\n"
                                   "Version: 1.2.3\n")
    (meta / "top_level.txt").write_text("plugtest_envs\n")
    monkeypatch.syspath_prepend(str(site))
    register("plugtest/Echo-v0", entry_point="plugtest_envs:Echo")
    register("plugtest/Loose-v0", entry_point="no_such_dist_module:Env")
    try:
        write_package("plugtest/Echo-v0", tmp_path / "pkg")
        docker = (tmp_path / "pkg" / "Dockerfile").read_text()
        assert 'ARG PLUGIN_SPEC="plugtest-envs==1.2.3"' in docker
        install = docker.index('pip install --no-cache-dir "$PLUGIN_SPEC"')
        assert docker.index('pip install --no-cache-dir "$ENVGYM_SPEC"') < install
        assert install < docker.index("USER envgym")  # installed as root, before the drop
        builtin = (write_package(ENV, tmp_path / "own")[1]).read_text()
        assert "PLUGIN_SPEC" not in builtin
        with pytest.raises(InvalidConfig, match="no installed distribution"):
            write_package("plugtest/Loose-v0", tmp_path / "loose")
    finally:
        _REGISTRY.pop("plugtest/Echo-v0", None)
        _REGISTRY.pop("plugtest/Loose-v0", None)


def test_serve_env_sigterm_closes_sessions_and_exits_zero(tmp_path):
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    from tests.server_process import ServerProcess

    server = ServerProcess(["serve-env", ENV, "--max-sessions", "2", "--shutdown-timeout", "3"],
                           tmp_path / "log")
    try:
        assert http.get(f"{server.url}/health").json()["sessions"]["max"] == 2
        ws = connect(server.url.replace("http", "ws") + "/ws")
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
    finally:
        code, _ = server.terminate(timeout=30)
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
    assert code == 0 and "Traceback" not in server.text(), server.text()

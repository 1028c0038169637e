"""Ray rollout workers: the same trajectories as in-process, and a dead actor fails only its
own episodes."""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray", reason="the `ray` extra is not installed (pip install 'envgym[ray]')")

from envgym.integrations.ray import EnvPool, RemoteScripted, pooled, scripted_factory  # noqa: E402
from envgym.policy import ScriptedFactory, load_policy  # noqa: E402
from envgym.rollout import collect  # noqa: E402

os.environ.setdefault("RAY_AUTH_MODE", "disabled")
TIMING = {"sandbox_s"}


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def _comparable(trajs):
    """Trajectories without wall-clock fields, which no two runs share."""
    out = []
    for t in trajs:
        d = t.model_dump(exclude={"meta"})
        d["outcome"] = {k: v for k, v in d["outcome"].items() if k not in TIMING}
        for turn in d["turns"]:
            turn["info"] = {k: v for k, v in turn["info"].items() if k not in TIMING}
        out.append(d)
    return out


def test_scripted_oracle_in_workers_matches_in_process():
    from envgym.evaluation import run_episodes

    local = run_episodes("envgym/CodeRefine-v0", "scripted:oracle", episodes=6)
    remote = run_episodes("envgym/CodeRefine-v0", "scripted:oracle", episodes=6, workers=2)
    assert all(t.error is None for t in remote)
    assert _comparable(remote) == _comparable(local)


def test_token_policy_in_workers_matches_in_process_token_for_token(tmp_path):
    from envgym.agents.tiny import build_tiny_model
    from envgym.policy import SamplingParams

    model = build_tiny_model(tmp_path / "m", hidden_size=48, layers=1, include_envs=False)
    policy = load_policy(f"hf:{model}", device="cpu", threads=1)
    kwargs = {"series_length": 512, "max_rounds": 2, "tool_format": "tag", "max_turns": 3}
    sampling = SamplingParams(max_tokens=12, temperature=1.0, seed=7)
    local = collect("envgym/TimeSeries-v0", policy, episodes=2, group_size=2, env_kwargs=kwargs,
                    sampling=sampling, concurrency=1)
    pool = EnvPool("envgym/TimeSeries-v0", 2, kwargs)
    try:
        remote = collect(pool, policy, episodes=2, group_size=2, sampling=sampling, concurrency=1)
    finally:
        pool.shutdown()
    assert [t.token_sequence() for t in remote] == [t.token_sequence() for t in local]
    assert any(len(t.turns) > 1 for t in local)
    assert _comparable(remote) == _comparable(local)


def test_a_killed_actor_fails_only_its_own_episodes():
    pool, _ = pooled("envgym/TimeSeries-v0", "scripted:heuristic", 2, {"max_rounds": 3})
    victim = pool.actors[0]
    killed = []

    class Killer(RemoteScripted):
        """Kills the first actor in the middle of its episodes' second turn."""

        def act(self, env, messages):
            if env.actor is victim and not killed and len(messages) > 2:
                killed.append(True)
                ray.kill(victim, no_restart=False)
            return super().act(env, messages)

    factory = ScriptedFactory("heuristic", lambda seed=0: Killer("heuristic", seed))
    try:
        trajs = collect(pool, factory, episodes=6, concurrency=6)
        assert killed
        failed = [t for t in trajs if t.error]
        done = [t for t in trajs if not t.error]
        assert failed and done, [t.error for t in trajs]
        assert all("actor" in t.error.lower() or "died" in t.error.lower() for t in failed)
        assert all(t.outcome.get("success") is not None for t in done)
        # Ray restarted the actor: new episodes on it complete
        again = collect(pool, scripted_factory("scripted:heuristic"), episodes=4, concurrency=4)
        assert all(t.error is None for t in again), [t.error for t in again]
    finally:
        pool.shutdown()


def test_workers_without_ray_is_a_clear_error(monkeypatch):
    import builtins

    from envgym.errors import InvalidConfig
    from envgym.integrations import ray as bridge

    real = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray":
            raise ImportError("no ray")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(InvalidConfig, match=r"envgym\[ray\]"):
        bridge.require_ray()


def test_training_with_workers_rolls_out_the_same_tokens(tmp_path):
    """`rollout.workers = 2` through `envgym train`: the same per-step trajectories as the
    in-process engine (deterministic rollouts, same seeds)."""
    import subprocess
    import sys

    from envgym.agents.tiny import build_tiny_model
    from envgym.trajectory import read_trajectories

    model = build_tiny_model(tmp_path / "m", hidden_size=48, layers=1, include_envs=False)
    runs = {}
    for workers in (0, 2):
        out = tmp_path / f"run{workers}"
        cfg = tmp_path / f"w{workers}.toml"
        cfg.write_text(f"""
seed = 2
output_dir = "{out}"
steps = 2
checkpoint_every = 0
credit = ["grpo"]
[model]
policy = "{model}"
[[envs]]
id = "envgym/TimeSeries-v0"
kwargs = {{ series_length = 512, max_rounds = 1, tool_format = "tag" }}
train_seeds = [0, 1000]
eval_seeds = [5000, 5001]
[rollout]
group_size = 2
tasks_per_step = 2
max_turns = 2
max_tokens = 8
eval_episodes = 1
deterministic = true
workers = {workers}
[log]
tensorboard = false
progress = false
trajectories = true
""")
        r = subprocess.run([sys.executable, "-m", "envgym.agents.trainer", str(cfg)],
                           capture_output=True, text=True, timeout=600,
                           env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert r.returncode == 0, r.stderr[-3000:]
        runs[workers] = [[t.token_sequence() for t in read_trajectories(f)]
                         for f in sorted((out / "trajectories").glob("step_*.jsonl"))]
    assert len(runs[0]) == 2 and runs[0][0]
    assert runs[2] == runs[0]


def test_a_new_episode_waits_out_an_actor_restart_then_gives_up():
    """Ray refuses calls while a killed actor restarts; making an environment then retries
    (nothing was handed out) until `restart_wait`, and past it says why."""
    from types import SimpleNamespace

    refusals = []

    class Restarting:
        def __init__(self, times: int):
            self.times = times
            self.make = SimpleNamespace(remote=self._make)

        def _make(self, lane=""):
            if len(refusals) < self.times:
                refusals.append(1)
                raise ray.exceptions.ActorUnavailableError("The actor is restarting.", b"\0" * 16)
            return (7, {"id": "x"})

    fake_ray = SimpleNamespace(get=lambda ref: ref, exceptions=ray.exceptions)
    pool = EnvPool.__new__(EnvPool)
    pool.ray, pool.restart_wait = fake_ray, 5.0
    assert pool._make(Restarting(times=2)) == (7, {"id": "x"}) and len(refusals) == 2
    refusals.clear()
    pool.restart_wait = 0.0
    with pytest.raises(ray.exceptions.ActorUnavailableError):
        pool._make(Restarting(times=10))


# ---- workers under asynchronous training (rollout.max_staleness >= 1) ----------------------

def test_a_pool_lane_binds_only_its_own_run_state():
    """The rollout thread and the learner's evaluation share a pool's actors, each thread a
    lane: an environment made for one lane reads that lane's run state, whatever the other
    lane set last (the old single run state per actor would hand it the other's)."""
    from envgym.integrations.ray import EnvWorker
    from envgym.runstate import RunState

    worker = EnvWorker("envgym/TimeSeries-v0", {"series_length": 512})
    ahead, learner = RunState(), RunState()
    ahead.step, learner.step = 7, 3
    worker.set_run(ahead.state_dict(), "rollouts")
    worker.set_run(learner.state_dict(), "evaluation")  # set after: the old code's winner
    made = {lane: worker.envs[worker.make(lane)[0]] for lane in ("rollouts", "evaluation")}
    assert made["rollouts"].run.step == 7 and made["evaluation"].run.step == 3
    assert worker.envs[worker.make("never set")[0]].run is None


def test_training_pools_are_one_per_config_and_a_lane_per_thread(monkeypatch):
    """Two threads asking at once get the same actors (the registry is locked: a second
    set of actors would wait forever for CPUs on a small cluster) and lanes of their own.
    Building a pool is slowed down so that both threads are inside the registry at once."""
    import threading
    import time

    from envgym.integrations import ray as bridge
    from envgym.runstate import RunState

    class SlowPool(bridge.EnvPool):
        def __init__(self, *args, **kwargs):
            time.sleep(0.5)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(bridge, "EnvPool", SlowPool)
    lanes, barrier = [], threading.Barrier(2)

    def ask():
        barrier.wait()
        lanes.append(bridge.training_pool("envgym/TimeSeries-v0", {"max_rounds": 1},
                                          RunState(), 1))

    threads = [threading.Thread(target=ask) for _ in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert len(lanes) == 2 and lanes[0].pool is lanes[1].pool
        assert lanes[0].name != lanes[1].name
        assert len(bridge._POOLS) == 1
    finally:
        bridge.shutdown_training_pools()
    assert not bridge._POOLS


def _async_train(model, out, resume=False, steps=None, **rollout):
    """The asynchronous tests' tiny run; top-level keys (`steps`, checkpoints) among
    `rollout` are set on the config itself."""
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train

    from tests.learner.async_fixture import tiny_config

    top = {k: rollout.pop(k) for k in ("checkpoint_every", "keep_checkpoints") if k in rollout}
    # deterministic: one episode at a time, so every generate batches the same rows: the
    # actors' timing changes which episodes share a batch, and so a log-prob's last bit
    cfg = tiny_config(model, out, deterministic=True, **rollout)
    cfg.update(top, **({"steps": steps} if steps else {}))
    cfg["eval_every"] = 1  # the learner's evaluation runs while the thread samples ahead
    return train(load_config(cfg), resume=resume, eval_at_start=False)


def test_async_training_with_workers_records_versions_and_holds_the_bound(tmp_path):
    """`rollout.workers = 2` under `max_staleness = 1`, evaluating every step beside the
    rollout thread: every turn records the version that sampled it (s-2), the bound holds,
    advantages are finite, and the step files equal those of the same asynchronous run
    in-process (the actors change where environments run, nothing else); at
    `max_staleness = 0` the workers' run equals the in-process synchronous one."""
    import json
    import math

    from envgym.agents.async_rollouts import VERSIONS
    from envgym.integrations import ray as bridge
    from envgym.trajectory import read_trajectories

    from tests.learner.async_fixture import STEPS, small_model, step_digests

    model = small_model(tmp_path / "m")
    try:
        for staleness in (1, 0):
            runs = {}
            for workers in (2, 0):
                out = tmp_path / f"s{staleness}w{workers}"
                _async_train(model, out, max_staleness=staleness, workers=workers)
                runs[workers] = step_digests(out)
            assert len(runs[2]) == STEPS and runs[2] == runs[0], staleness
        out = tmp_path / "s1w2"
        records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
        assert [r["async/staleness_max"] for r in records] == [0.0, 1.0, 1.0]
        assert all(r["async/dropped_stale"] == 0.0 and "eval/reward" in r for r in records)
        for step in range(1, STEPS + 1):
            trajs = list(read_trajectories(out / "trajectories" / f"step_{step:06d}.jsonl"))
            assert trajs
            for t in trajs:
                assert t.meta[VERSIONS] == [max(0, step - 2)] * len(t.turns)
                if t.meta["credit"] is not None:
                    adv = [a for turn in t.meta["credit"]["advantages"] for a in turn]
                    assert adv and all(math.isfinite(a) for a in adv)
    finally:
        bridge.shutdown_training_pools()


def test_killed_async_run_with_workers_resumes_exactly(tmp_path):
    """Kill and resume stay exact with workers: step 3 was in flight (sampled in the actors)
    at step 2's checkpoint and is trained from the checkpoint, step 4 is sampled after the
    resume, and both equal the uninterrupted run's."""
    import shutil

    import torch

    from envgym.integrations import ray as bridge

    from tests.learner.async_fixture import small_model, step_digests

    model, out = small_model(tmp_path / "m"), tmp_path / "run"
    opts = dict(max_staleness=1, workers=2)
    try:
        _async_train(model, out, steps=4, checkpoint_every=2, keep_checkpoints=3, **opts)
        state = torch.load(out / "checkpoints/step_0000002/state.pt", weights_only=False)
        assert [x["step"] for x in state["in_flight"]] == [3]
        uninterrupted = step_digests(out)
        for gone in ("final", "checkpoints/step_0000004", "trajectories/step_000003.jsonl",
                     "trajectories/step_000004.jsonl"):  # as if killed after checkpoint 2
            p = out / gone
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        _async_train(model, out, resume=True, steps=4, checkpoint_every=2, keep_checkpoints=3,
                     **opts)
        assert step_digests(out) == uninterrupted
    finally:
        bridge.shutdown_training_pools()

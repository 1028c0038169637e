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

        def _make(self):
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

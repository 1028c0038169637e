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

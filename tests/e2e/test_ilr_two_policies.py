"""ILR with two learning policies (issue 25): `[agents.ID]` gives each debater its own model,
optimizer, scheduler and checkpoint, trained together from one rollout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

import pytest
import torch
from envgym.agents.config import load_config
from safetensors.torch import load_file

from envgym.errors import InvalidConfig

CONFIG = Path(__file__).resolve().parents[2] / "agents" / "configs" / "debate_ilr_cpu.toml"
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
AGENTS = ("agent_0", "agent_1")


def _config(out: Path, model: Path, steps: int = 1):
    """The shipped config, scaled down: both agents start from the same small model (so a
    difference after training comes from training), no SFT."""
    cfg = load_config(CONFIG)
    cfg.output_dir, cfg.steps, cfg.checkpoint_every = out, steps, 1
    cfg.model.warm_start = "none"
    for name in AGENTS:
        cfg.agents[name].model = {"policy": str(model), "warm_start": "none"}
    cfg.rollout.eval_episodes, cfg.rollout.deterministic = 2, True
    cfg.rollout.tasks_per_step, cfg.rollout.group_size, cfg.rollout.max_tokens = 2, 2, 8
    cfg.log.progress = False
    # an untrained model's debates all score alike (zero advantages); an entropy bonus gives
    # every learner a gradient, so what each optimizer changes is visible
    cfg.ppo.entropy_coef = 0.01
    return load_config(cfg.model_dump(mode="json"))  # validated again


def test_each_agent_trains_its_own_model_on_its_own_trajectories(tmp_path, small_model,
                                                                 monkeypatch):
    from envgym.agents import multi_policy
    from envgym.agents.report import read_metrics
    from envgym.agents.trainer import train

    seen: list[tuple[str, set, int]] = []
    real = multi_policy._update

    def spy(lr, credit, cfg, how, shuffle):
        params = {id(p) for g in lr.optimizer.param_groups for p in g["params"]}
        assert params == {id(p) for p in lr.model.parameters() if p.requires_grad}
        seen.append((lr.name, {t.agent_id for t in credit.trajectories}, id(lr.model)))
        return real(lr, credit, cfg, how, shuffle)

    monkeypatch.setattr(multi_policy, "_update", spy)
    start = load_file(small_model / "model.safetensors")
    result = train(_config(tmp_path, small_model), eval_at_start=False)
    # one update per agent, on that agent's trajectories only, each with its own model
    assert [(n, a) for n, a, _ in seen] == [("agent_0", {"agent_0"}), ("agent_1", {"agent_1"})]
    assert seen[0][2] != seen[1][2]
    models = result["models"]
    assert set(models) == set(AGENTS) and models["agent_0"] is not models["agent_1"]
    a, b = (dict(models[n].state_dict()) for n in AGENTS)
    changed = [k for k in start if k in a and not torch.equal(start[k], a[k])]
    assert changed and any(not torch.equal(start[k], b[k]) for k in start if k in b)
    assert any(not torch.equal(a[k], b[k]) for k in a), "the two learners ended up equal"
    # checkpoints hold both learners, each optimizer stepped once over its own parameters
    state = torch.load(tmp_path / "checkpoints/step_0000001/state.pt", weights_only=False)
    assert "model" not in state and set(state["agents"]) == set(AGENTS)
    for name in AGENTS:
        part = state["agents"][name]
        own = models[name].state_dict()
        assert all(torch.equal(part["model"][k], own[k]) for k in part["model"])
        steps = {float(s["step"]) for s in part["optimizer"]["state"].values()}
        assert steps == {1.0}
        assert len(part["optimizer"]["state"]) == sum(p.requires_grad
                                                      for p in models[name].parameters())
    assert part["optimizer"]["param_groups"][0]["lr"] == pytest.approx(2e-4)  # agent_1's lr
    assert state["agents"]["agent_0"]["optimizer"]["param_groups"][0]["lr"] == pytest.approx(4e-4)
    for name in AGENTS:
        assert (tmp_path / "final" / name / "model.safetensors").is_file()
    m = next(r for r in read_metrics(tmp_path / "metrics.jsonl") if r.get("step") == 1)
    for name in AGENTS:
        for key in ("return", "varying_groups", "loss", "lr", "trajectories"):
            assert f"agent/{name}/{key}" in m, key
        assert f"eval/Debate-v0/agent/{name}/return" in m
    assert not any(k.startswith("fixed/") for k in m)


def _train(config: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "envgym.agents.trainer", str(config), *extra],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _write(cfg, path: Path) -> Path:
    from envgym.agents.configdoc import to_toml
    path.write_text(to_toml(cfg))
    return path


def test_killed_two_policy_run_resumes_bit_for_bit(tmp_path, small_model):
    full = _write(_config(tmp_path / "full", small_model, steps=3), tmp_path / "full.toml")
    assert _train(full).wait(timeout=400) == 0
    killed = _write(_config(tmp_path / "killed", small_model, steps=3), tmp_path / "killed.toml")
    proc = _train(killed)
    deadline = time.time() + 400
    while not (tmp_path / "killed/checkpoints/step_0000002").exists():
        assert proc.poll() is None and time.time() < deadline, proc.stdout.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "killed/final").exists()
    resumed = _train(killed, "--resume")
    assert resumed.wait(timeout=400) == 0, resumed.stdout.read()
    steps = [json.loads(x)["step"] for x in (tmp_path / "killed/metrics.jsonl").read_text()
             .splitlines()]
    assert steps == [0, 1, 2, 3]
    for name in AGENTS:
        a = load_file(tmp_path / "full/final" / name / "model.safetensors")
        b = load_file(tmp_path / "killed/final" / name / "model.safetensors")
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), name
    a = torch.load(tmp_path / "full/checkpoints/step_0000003/state.pt", weights_only=False)
    b = torch.load(tmp_path / "killed/checkpoints/step_0000003/state.pt", weights_only=False)
    for name in AGENTS:
        oa, ob = a["agents"][name]["optimizer"]["state"], b["agents"][name]["optimizer"]["state"]
        assert all(torch.equal(oa[i]["exp_avg"], ob[i]["exp_avg"]) for i in oa)
        assert a["agents"][name]["scheduler"] == b["agents"][name]["scheduler"]
    assert _same(a["run_state"], b["run_state"])  # the IRT model and reward histories


def _same(a, b) -> bool:
    """Deep equality through dicts, sequences, arrays and plain objects (the IRT model)."""
    import numpy as np
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple, deque)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    if hasattr(a, "__dict__"):
        return type(a) is type(b) and _same(vars(a), vars(b))
    return a == b


# ---- config ----------------------------------------------------------------------------------

def _raw(**extra):
    debate = {"id": "envgym/Debate-v0", "kwargs": {"n_agents": 2, "n_generated": 1000},
              "train_seeds": [0, 900], "eval_seeds": [900, 964]}
    data = {"envs": [debate],
            "agents": {"agent_0": {}, "agent_1": {"lr": 1e-3, "model": {"tiny_layers": 1}}}}
    data.update(extra)
    return data


def test_agent_tables_merge_over_model_and_refuse_what_they_cannot_train():
    cfg = load_config(_raw())
    assert cfg.agent_model("agent_1").tiny_layers == 1
    assert cfg.agent_model("agent_0").tiny_layers == cfg.model.tiny_layers
    with pytest.raises(InvalidConfig, match="single-agent"):
        load_config(_raw(envs=[{"id": "envgym/TimeSeries-v0"}]))
    with pytest.raises(InvalidConfig, match="fixed partners"):
        load_config(_raw(envs=[{**_raw()["envs"][0], "agents": {"agent_1": "scripted:noisy"}}]))
    with pytest.raises(InvalidConfig, match=r"agents\.agent_1\.model: tiny_layrs"):
        load_config(_raw(agents={"agent_1": {"model": {"tiny_layrs": 1}}}))
    with pytest.raises(InvalidConfig, match="hf backend"):
        load_config(_raw(agents={"agent_1": {"model": {"backend": "vllm"}}}))


def test_agent_tables_round_trip_through_print_config():
    import tomllib
    from envgym.agents.configdoc import to_toml
    cfg = load_config(_raw())
    assert load_config(tomllib.loads(to_toml(cfg))) == cfg


def test_varying_groups_counts_groups_whose_own_returns_differ():
    from envgym.agents.agent_metrics import agent_metrics

    from envgym.trajectory import Trajectory, Turn

    def traj(group, agent, r):
        return Trajectory(env_id="e", agent_id=agent, group_id=group, turns=[Turn(action="",
                                                                               reward=r)])
    trajs = [traj("q0/a", "a", 1.0), traj("q0/a", "a", 0.0),   # varies
             traj("q1/a", "a", 0.5), traj("q1/a", "a", 0.5),   # does not
             traj("q0/b", "b", 0.2), traj("q0/b", "b", 0.2)]
    m = agent_metrics(trajs)
    assert m["agent/a/varying_groups"] == 0.5 and m["agent/b/varying_groups"] == 0.0
    assert "agent/a/varying_groups" not in agent_metrics(trajs[::2])  # groups of one: no rate


def test_multi_agent_sft_demonstrations_tokenise_every_seat():
    from envgym.agents.sft import multi_agent_demonstrations

    trajs = multi_agent_demonstrations("envgym/Debate-v0", {"noisy": 1.0, "oracle": 1.0}, 4,
                                       (0, 900), {"n_agents": 2, "n_generated": 1000}, seed=1)
    assert len(trajs) == 8 and {t.agent_id for t in trajs} == set(AGENTS)
    assert all(t.turns and all(x.action for x in t.turns) for t in trajs)
    assert all(0 <= t.seed < 900 for t in trajs)

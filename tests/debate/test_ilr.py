"""ILR through the engine: run-level IRT and reward histories, modes in meta, calibrated
rewards on engine-built batches, per-(task, agent) groups and fixed partners."""

import numpy as np
import pytest

from envgym.agents.config import EnvConfig
from envgym.agents.credit import compute_credit
from envgym.agents.structure import collect_agents, drop_fixed_agents, update_run_state
from envgym.environments.debate.env import DebateEnv
from envgym.runstate import RunState

ENV = "envgym/Debate-v0"


def _debates(run, kwargs, agents, seed=0, episodes=8, group=2):
    env = EnvConfig(id=ENV, kwargs=kwargs, train_seeds=(0, 500), eval_seeds=(500, 600),
                    agents=agents)
    return collect_agents("scripted:noisy", env, dict(env.kwargs), seed, episodes, group,
                          None, run, {})


def test_irt_lives_in_the_run_and_learns_across_steps():
    run = RunState()
    strong = {"agent_0": "scripted:oracle", "agent_1": "scripted:stubborn"}
    for step in range(1, 4):
        run.step = step
        trajs = _debates(run, {"n_agents": 2}, strong, seed=40 * step)
        assert all(t.error is None for t in trajs)
        update_run_state(run, trajs)
    irt = run.state[DebateEnv.RUN_KEY]["irt"]
    # the oracle is always right at phase 0; the noisy stubborn solver (ability 0) is not
    assert irt.ability("agent_0") > 0.5 and irt.ability("agent_0") > irt.ability("agent_1") + 0.5
    assert len(irt.history) == 3 * 8 * 2 * 2
    # a new environment bound to the run sees those abilities at reset
    env = DebateEnv(n_agents=2)
    env.bind_run(run)
    _, infos = env.reset(seed=3)
    assert infos["agent_0"]["irt"]["ability"] == pytest.approx(irt.ability("agent_0"))
    # and the state survives a checkpoint round trip exactly
    restored = RunState()
    restored.load_state_dict(run.state_dict())
    again = restored.state[DebateEnv.RUN_KEY]["irt"]
    np.testing.assert_array_equal(again.theta, irt.theta)


def test_trajectories_record_mode_and_groups_are_per_task_and_agent():
    run = RunState()
    trajs = _debates(run, {"n_agents": 2}, {}, episodes=30, group=1)
    assert {t.meta["mode"] for t in trajs} == {"cooperative", "competitive"}
    assert len({t.meta["level"] for t in trajs}) >= 3
    for t in trajs:
        assert t.group_id == f"{t.meta['task_group']}/{t.agent_id}" and t.meta["trainable"]


def test_reward_history_has_spread_after_a_step_and_calibrated_uses_it():
    run = RunState()
    first = _debates(run, {"n_agents": 2, "interaction": "cooperative"}, {})
    update_run_state(run, first)
    history = run.state[DebateEnv.RUN_KEY]["history"]
    assert len(history["agent_0"]) == 16 and np.std(history["agent_0"]) > 0
    second = _debates(run, {"n_agents": 2, "interaction": "cooperative"}, {}, seed=100)
    stats = second[0].meta["reward_history"]["agent_1"]
    assert stats["n"] == 16 and stats["std"] == pytest.approx(np.std(history["agent_1"]))
    batch = compute_credit(second, ["calibrated", "grpo"])
    assert batch.stats["calibrated/history_agents"] > 0


def test_every_mode_gets_the_same_sign_on_an_engine_built_batch():
    run, beta, floor = RunState(), 0.5, 0.5
    trajs = (_debates(run, {"n_agents": 2, "interaction": "cooperative"}, {}, seed=7, group=3)
             + _debates(run, {"n_agents": 2, "interaction": "competitive"}, {}, seed=200, group=3))
    batch = compute_credit(trajs, ["calibrated", "grpo"],
                           {"calibrated": {"beta": beta, "stats": "group"}})
    # by hand: per question, partner's episode z-score over the question's episodes
    checked = 0
    for i, t in enumerate(trajs):
        partner = [p for p in trajs if p.meta["task_group"] == t.meta["task_group"]
                   and p.agent_id != t.agent_id]
        r = np.array([p.total_reward for p in sorted(partner, key=lambda p: p.meta["episode_id"])])
        mine = next(p for p in partner if p.meta["episode_id"] == t.meta["episode_id"])
        z = (mine.total_reward - r.mean()) / max(r.std(), floor)
        expected = t.total_reward + beta * np.clip(z, -3, 3)
        assert batch.returns[i] == pytest.approx(expected)
        checked += abs(z) > 0.1 and t.meta["mode"] == "competitive"
    # competitive agents share their partner's unusual success too: a competitive sign
    # would pay an agent for misleading its partner
    assert checked > 0


def test_calibrated_refuses_a_trajectory_without_its_question_group():
    trajs = _debates(RunState(), {"n_agents": 2}, {}, episodes=1)
    del trajs[0].meta["task_group"]
    with pytest.raises(ValueError, match="task_group"):
        compute_credit(trajs, ["calibrated", "grpo"])


def test_fixed_agents_play_their_own_policy_and_leave_the_batch_after_credit():
    trajs = _debates(RunState(), {"n_agents": 2}, {"agent_1": "scripted:stubborn"}, episodes=2)
    fixed = [t for t in trajs if t.agent_id == "agent_1"]
    assert fixed and all(not t.meta["trainable"] and "stubborn" in t.policy for t in fixed)
    assert all(x.info["trainable"] is False for t in fixed for x in t.turns)
    batch = drop_fixed_agents(compute_credit(trajs, ["calibrated", "grpo"]))
    assert {t.agent_id for t in batch.trajectories} == {"agent_0"}
    assert len(batch.advantages) == len(batch.trajectories) == len(trajs) // 2


def test_config_refuses_eval_seeds_that_wrap_onto_training_questions():
    from envgym.agents.config import load_config
    from envgym.errors import InvalidConfig

    base = {"envs": [{"id": ENV, "kwargs": {"n_generated": 100},
                      "train_seeds": [0, 90], "eval_seeds": [1000, 1010]}]}
    with pytest.raises(InvalidConfig, match="seed mod 100.*10 of the same tasks"):
        load_config(base)  # 1000..1009 mod 100 = questions 0..9, which training uses
    base["envs"][0]["eval_seeds"] = [1090, 1100]
    load_config(base)  # questions 90..99: held out


def test_a_partner_history_without_spread_moves_calibrated_reward_boundedly():
    """A 0.1 change in a zero-variance partner's return used to move the calibrated reward
    by the whole clip (+1.5); now by beta * 0.1 / min_std."""
    def shifted(partner_return, **options):
        trajs = _debates(RunState(), {"n_agents": 2}, {}, episodes=1, group=1)
        for t in trajs:
            t.meta["reward_history"] = {a: {"mean": 1.0, "std": 0.0, "n": 50.0}
                                        for a in ("agent_0", "agent_1")}
        partner = next(t for t in trajs if t.agent_id == "agent_1")
        partner.turns[-1].reward += partner_return - partner.total_reward
        me = next(i for i, t in enumerate(trajs) if t.agent_id == "agent_0")
        batch = compute_credit(trajs, ["calibrated", "grpo"], {"calibrated": options})
        return batch.returns[me] - trajs[me].total_reward

    assert shifted(1.1) - shifted(1.0) == pytest.approx(0.5 * 0.1 / 0.5)
    assert shifted(1.1, beta=0.5, min_std=1.0) == pytest.approx(0.05)
    assert abs(shifted(100.0)) <= 0.5 * 3.0 + 1e-9  # the clip still bounds a huge jump
    with pytest.raises(ValueError, match="min_std"):
        shifted(1.0, min_std=0.0)

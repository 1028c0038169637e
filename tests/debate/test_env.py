"""DebateEnv: API conformance, phases, observations, rewards, calibration info, metrics."""

import json

import pytest
from pettingzoo.test import parallel_api_test

import envgym
from envgym.environments.debate import DebateEnv
from envgym.errors import InvalidConfig, ResetNeeded

from tests.samples import OWN, needs_real, real


def _ans(x) -> str:
    return f"My reasoning.\n<answer>{x}</answer>"


def _run(env, script, seed=0, mode="competitive"):
    """Play four phases; `script[agent]` lists the answers (gold = 'G', wrong = 'W')."""
    env.reset(seed=seed, options={"mode": mode})
    gold, wrong = env.task.answer, str(int(env.task.answer) + 1)
    steps = []
    for k in range(4):
        acts = {a: _ans(gold if s[k] == "G" else wrong) if s[k] in ("G", "W") else s[k]
                for a, s in script.items()}
        steps.append(env.step(acts))
    return steps


def test_parallel_api_test_passes():
    parallel_api_test(DebateEnv(), num_cycles=10)
    parallel_api_test(DebateEnv(n_agents=3), num_cycles=10)


def test_envgym_checker_passes():
    from envgym.checker import check

    report = check("envgym/Debate-v0")
    assert report.ok, report.render()


def test_registered_as_multi_agent_with_scripted_policies():
    spec = envgym.spec("envgym/Debate-v0")
    assert spec.multi_agent
    assert set(spec.scripted) == {"oracle", "noisy", "stubborn", "follower", "honest_lead",
                                  "hack_copy_peer", "hack_multiple_answers",
                                  "hack_deceive_partner", "hack_forge_env_line", "hack_sandbag",
                                  "hack_hedge_text", "hack_hedge_equals"}
    env = envgym.make("envgym/Debate-v0", n_agents=3)
    assert env.possible_agents == ["agent_0", "agent_1", "agent_2"]


def test_seed_picks_the_task_deterministically():
    env = DebateEnv()
    obs1, info1 = env.reset(seed=7)
    obs2, info2 = env.reset(seed=7)
    assert json.dumps(obs1) == json.dumps(obs2)
    assert info1["agent_0"]["task_id"] == info2["agent_0"]["task_id"] == "gen-L3-00007"
    assert env.reset(seed=8)[1]["agent_0"]["task_id"] != info1["agent_0"]["task_id"]
    assert env.reset(options={"task_id": "gen-L1-00005"})[1]["agent_1"]["task_id"] == "gen-L1-00005"


def test_reset_observation_and_irt_info():
    env = DebateEnv(ability_prior={"agent_0": 1.0})
    obs, infos = env.reset(seed=3)  # level 4 → prior b = 1
    assert obs["agent_0"][0]["role"] == "system" and "You are agent_0" in obs["agent_0"][0]["content"]
    assert env.task.question in obs["agent_1"][1]["content"]
    assert infos["agent_0"]["irt"]["difficulty"] == 1.0
    assert infos["agent_0"]["irt"]["p_correct"] == pytest.approx(0.5)
    assert infos["agent_1"]["irt"]["p_correct"] == pytest.approx(0.2689414, abs=1e-6)
    assert infos["agent_0"]["mode"] == "cooperative"   # mean 0.384 < 0.5
    assert infos["agent_0"]["next_phase"] == "independent"


def test_observations_carry_peer_messages_of_previous_phase_and_mode():
    env = DebateEnv(n_agents=3)
    env.reset(seed=0, options={"mode": "competitive"})
    obs = env.step({a: f"independent {a} <answer>1</answer>" for a in env.agents})[0]
    text = obs["agent_0"][0]["content"]
    assert "Mode: competitive" in text and "Idea Sharing" in text and "independent agent_1" not in text
    obs = env.step({a: f"sharing by {a} <answer>{i}</answer>" for i, a in enumerate(env.agents)})[0]
    text = obs["agent_0"][0]["content"]
    assert "Idea Analysis" in text and "flaw" in text and "Mode: competitive" in text
    assert "> sharing by agent_1" in text and "> sharing by agent_2" in text
    assert "sharing by agent_0" not in text
    assert 'Current answers: agent_1: "1"; agent_2: "2"' in text
    obs = env.step({a: f"analysis by {a}" for a in env.agents})[0]  # answer optional here
    text = obs["agent_2"][0]["content"]
    assert "Idea Fusion" in text and "analysis by agent_0" in text and "sharing by" not in text
    assert 'agent_0: "0"; agent_1: "1"' in text


def test_cooperative_prompt_is_constructive():
    env = DebateEnv()
    env.reset(seed=0, options={"mode": "cooperative"})
    env.step({a: _ans(1) for a in env.agents})
    obs = env.step({a: _ans(1) for a in env.agents})[0]
    assert "constructively" in obs["agent_1"][0]["content"]


def test_rewards_by_hand_are_the_same_in_either_mode():
    for mode in ("cooperative", "competitive"):
        env = DebateEnv()
        steps = _run(env, {"agent_0": "GGGG", "agent_1": "WWGG"}, mode=mode)
        # the phase-0 answer is paid at phase 0
        assert steps[0][1] == {"agent_0": 0.5, "agent_1": 0.0}
        assert [s[1] for s in steps[1:3]] == [{"agent_0": 0.0, "agent_1": 0.0}] * 2
        _, rewards, terms, truncs, infos = steps[-1]
        # agent_1 shared W then G and ended G: half its stated answers are its final one
        assert infos["agent_1"]["reward_components"] == {"correct": 1.0, "shared": 0.125,
                                                         "team": 0.5, "persuaded": 0.0}
        assert rewards == {"agent_0": 1.75, "agent_1": 1.625}
        assert all(terms.values()) and not any(truncs.values()) and env.agents == []
        out = infos["agent_1"]["outcome"]
        assert (out["initial_correct"], out["final_correct"], out["consensus"]) == (False, True, True)
        assert out["returns"] == {"agent_0": 2.25, "agent_1": 1.625}


def test_persuasion_penalty_and_no_reward_for_a_peer_failure():
    env = DebateEnv()
    _, rewards, _, _, infos = _run(env, {"agent_0": "GGGG", "agent_1": "GGWW"})[-1]
    # team pays the share of agents that end right (1 of 2): the half agent_0 would get
    # from a right peer is what agent_1's failure costs it
    assert rewards == {"agent_0": 1.5, "agent_1": -0.25}
    assert infos["agent_1"]["reward_components"] == {"correct": 0.0, "shared": 0.0, "team": 0.25,
                                                     "persuaded": -0.5}
    assert infos["agent_0"]["outcome"]["consensus"] is False


def test_the_removed_competitive_bonus_is_refused_with_the_reason():
    with pytest.raises(InvalidConfig, match="misleading"):
        DebateEnv(competitive_bonus=0.5)


def test_malformed_actions_cost_format_penalty_never_raise():
    env = DebateEnv()
    steps = _run(env, {"agent_0": ["no tag", "G", "", "<answer>"], "agent_1": "GGGG"})
    assert steps[0][1]["agent_0"] == pytest.approx(-0.1)
    assert "missing <answer>" in steps[0][4]["agent_0"]["parse_error"]
    assert "Invalid action" in steps[0][0]["agent_0"][0]["content"]
    assert "parse_error" not in steps[0][4]["agent_1"]
    assert steps[2][4]["agent_0"]["parse_error"] == "the action is empty."
    _, rewards, _, _, infos = steps[-1]
    assert infos["agent_0"]["reward_components"]["format"] == -0.1
    assert rewards["agent_0"] == pytest.approx(-0.1)   # no final answer: wrong, initial wrong too
    assert infos["agent_0"]["outcome"]["invalid_actions"] == 3


def test_missing_and_junk_actions():
    env = DebateEnv()
    env.reset(seed=1)
    _, rewards, _, _, infos = env.step({"agent_1": b"\xff<answer>3</answer>"})
    assert "no action" in infos["agent_0"]["parse_error"] and rewards["agent_0"] == -0.1
    assert "parse_error" not in infos["agent_1"]
    _, _, _, _, infos = env.step({a: "x" * 30_000 for a in env.agents})
    assert "limit" in infos["agent_0"]["parse_error"]


def test_step_after_end_needs_reset():
    env = DebateEnv()
    _run(env, {"agent_0": "GGGG", "agent_1": "GGGG"})
    with pytest.raises(ResetNeeded):
        env.step({"agent_0": "x"})


def test_solo_inference_mode_is_one_step():
    env = DebateEnv(n_agents=1)
    obs, infos = env.reset(seed=2)
    assert infos["agent_0"]["mode"] == "solo" and "one of" not in obs["agent_0"][0]["content"]
    _, rewards, terms, _, infos = env.step({"agent_0": _ans(env.task.answer)})
    assert terms == {"agent_0": True} and rewards == {"agent_0": 1.0}
    assert infos["agent_0"]["outcome"]["success"] is True


@pytest.mark.parametrize("kwargs", [{"n_agents": 5}, {"n_agents": 0}, {"interaction": "chaos"},
                                    {"mode_rule": "median"}, {"irt_model": "3pl"},
                                    {"prompts": {"sharnig": "typo"}}])
def test_bad_config_raises(kwargs):
    with pytest.raises(InvalidConfig):
        DebateEnv(**kwargs)


def test_forced_interaction_and_trainable_flags():
    env = DebateEnv(interaction="competitive", trainable=["agent_0"])
    _, infos = env.reset(seed=4)   # level 5: dynamic would pick cooperative
    assert infos["agent_0"]["mode"] == "competitive"
    assert env.trainable == {"agent_0": True, "agent_1": False}
    assert infos["agent_1"]["trainable"] is False


def test_reward_stats_and_calibrated_reward_by_hand():
    env = DebateEnv()
    _run(env, {"agent_0": "GGGG", "agent_1": "GGWW"})            # returns 2.0, 0.25
    infos = _run(env, {"agent_0": "GGGG", "agent_1": "GGGG"}, seed=1)[-1][4]  # 2.25, 2.25
    stats = infos["agent_0"]["reward_stats"]
    assert stats["own"] == {"mean": 2.125, "std": 0.125, "n": 2.0}
    assert stats["partners"] == {"mean": 1.25, "std": 1.0, "n": 2.0}
    assert stats["group"] == {"mean": 2.25, "std": 0.0, "n": 2.0}
    assert stats["partner_reward"] == 2.25
    # the same sign in a competitive episode: 2.25 + 0.5 * (2.25 - 1.25) / 1.0
    assert infos["agent_0"]["calibrated_reward"] == pytest.approx(2.75)
    assert infos["agent_0"]["outcome"]["calibrated"]["agent_0"] == pytest.approx(2.75)


def test_irt_learns_from_initial_answers_only():
    env = DebateEnv(irt_model="rasch")
    for seed in range(10):
        _run(env, {"agent_0": "GGGG", "agent_1": "WWGG"}, seed=seed)
    assert env.irt.ability("agent_0") > 0.5 > -0.5 > env.irt.ability("agent_1")
    frozen = DebateEnv(irt_update=False)
    _run(frozen, {"agent_0": "GGGG", "agent_1": "WWGG"})
    assert frozen.irt.ability("agent_0") == 0.0 and not frozen.irt.history


def test_own_gsm8k_file_through_env():
    env = DebateEnv(dataset=str(OWN / "gsm8k" / "train.jsonl"))
    env.reset(seed=1)
    assert env.task_id == "gsm8k-00001" and env.task.answer == "1250"
    env.step({a: _ans("1,250") for a in env.agents})
    env.step({a: _ans("1250") for a in env.agents})
    env.step({a: "fine" for a in env.agents})
    _, rewards, _, _, _ = env.step({a: _ans("1250.0") for a in env.agents})
    assert all(r >= 1.0 for r in rewards.values())
    env.reset(seed=1)
    for _ in range(3):
        env.step({a: "fine" for a in env.agents})
    _, wrong, _, _, _ = env.step({a: _ans("1205") for a in env.agents})
    assert all(w < r for w, r in zip(wrong.values(), rewards.values()))


@needs_real
def test_real_gsm8k_sample_through_env():
    env = DebateEnv(dataset=str(real("gsm8k", "train_sample.jsonl")))
    env.reset(seed=3)
    assert env.task_id == "gsm8k-00003" and env.task.answer == "1080"
    env.step({a: _ans("1,080") for a in env.agents})
    env.step({a: _ans("1080") for a in env.agents})
    env.step({a: "fine" for a in env.agents})
    _, rewards, _, _, _ = env.step({a: _ans("1080.0") for a in env.agents})
    assert all(r >= 1.0 for r in rewards.values())


def test_fork_is_independent_and_render():
    env = DebateEnv(render_mode="ansi")
    env.reset(seed=0)
    child = env.fork()
    child.step({a: _ans(1) for a in child.agents})
    assert env.phase == "independent" and child.phase == "sharing"
    assert "[agent_0, independent]" in child.render() and "[agent_0" not in env.render()
    env.close()
    env.close()


def test_prompts_are_configurable():
    env = DebateEnv(prompts={"sharing": "{note}SHARE NOW in {mode} mode"})
    env.reset(seed=0, options={"mode": "cooperative"})
    obs = env.step({a: _ans(1) for a in env.agents})[0]
    assert obs["agent_0"][0]["content"] == "SHARE NOW in cooperative mode"

import json

import numpy as np
import pytest

import envgym
from envgym.errors import InvalidConfig
from envgym.evaluation import evaluate
from envgym.environments.timeseries.env import ZOOM
from envgym.environments.timeseries.tasks import TASK_TYPES, generate_task

ENV = "envgym/TimeSeries-v0"


def zoom(a, b, think=True):
    call = json.dumps({"name": ZOOM, "arguments": {"ts_seg": [a, b]}})
    return ("<think>look</think>" if think else "") + f"<tool_call>{call}</tool_call>"


def evidence_zoom(env, k, think=True):
    """A zoom onto the task's k-th evidence interval: an informative zoom."""
    s, e = env.task.evidence[k % len(env.task.evidence)]
    return zoom(s, e, think)


def test_generator_is_deterministic_and_covers_every_task_type():
    a, b = generate_task(7), generate_task(7)
    assert a == b and len(a.series) >= 1000
    kinds = {generate_task(s).task_type for s in range(60)}
    assert kinds == set(TASK_TYPES)
    for s in range(60):
        task = generate_task(s)
        assert task.evidence and all(0 <= x <= y < len(task.series) for x, y in task.evidence)


def test_opening_is_a_coarse_sketch_not_the_whole_series():
    env = envgym.make(ENV)
    obs, info = env.reset(seed=3)
    numbers = obs[1]["content"].split("Overview")[1].split("Question")[0].split("\n")[1].split()
    assert len(numbers) == env.sketch_points < len(env.task.series) / 50


def test_zoom_rewards_and_components_by_hand():
    env = envgym.make(ENV, point_cost=1e-3)
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.step(zoom(100, 199))
    assert info["reward_components"] == pytest.approx({"round": -0.1, "points": -0.1})
    assert reward == pytest.approx(-0.2) and info["role"] == "controller"
    assert obs[0]["role"] == "tool" and obs[0]["content"].startswith("segment [100, 199]: 16 values, step 6.25")


def test_answer_step_carries_artist_controller_and_reasoner_components():
    env = envgym.make(ENV, point_cost=0.0)
    env.reset(seed=0)
    gold = env.task.answer
    assert len(env.task.evidence) == 2
    env.step(evidence_zoom(env, 0))
    env.step(evidence_zoom(env, 1))
    *_, reward, term, _, info = env.step(f"<think>so</think><answer>{gold}</answer>")
    assert term and info["role"] == "reasoner"
    assert info["reward_components"] == pytest.approx({
        "accuracy": 3.0, "reasoner_format": 1.0, "consistency": 3.0, "exploration": 1.0,
        "controller_format": 1.0})
    assert info["role_rewards"] == pytest.approx({"controller": -0.2 + 5.0, "reasoner": 4.0})
    assert info["role_components"] == {
        "controller": pytest.approx({"consistency": 3.0, "exploration": 1.0, "controller_format": 1.0}),
        "reasoner": pytest.approx({"accuracy": 3.0, "reasoner_format": 1.0})}
    assert info["accuracy"] == 1.0
    assert info["controller_return"] == pytest.approx(-0.2 + 5.0)
    inspected = sum(e - s + 1 for s, e in env.task.evidence)
    assert info["outcome"]["success"] and info["outcome"]["points_inspected"] == inspected


def test_first_segment_retries_are_not_an_invalid_episode():
    env = envgym.make(ENV, point_cost=0.0)
    env.reset(seed=0, options={"train_step": 150})
    for _ in range(4):  # four bad tries of the first segment: retries (ARTIST allows 5)
        *_, term, trunc, info = env.step(zoom(5, 2))
        # a junk turn costs more than the costliest valid zoom (0.1 round + 0 points + margin)
        assert not (term or trunc) and info["reward_components"] == pytest.approx({"format": -0.2})
    env.step(zoom(0, 10, think=False))
    *_, info = env.step("<answer>A</answer>")
    comps = info["reward_components"]
    assert comps["controller_format"] == 0.0 and "consistency" in comps  # no -2 override
    assert comps["reasoner_format"] == 0.5  # no <think>


def test_no_valid_segment_or_a_later_invalid_round_gets_the_minus_two_override():
    env = envgym.make(ENV, point_cost=0.0)
    env.reset(seed=0)
    for k in range(5):
        *_, term, trunc, info = env.step("junk")
    # the override replaces R_c: the four retries' charges (4 x -0.2) come back
    assert term and info["reward_components"] == pytest.approx(
        {"controller_format": -2.0, "override_refund": 0.8})
    assert info["controller_return"] == -2.0
    assert info["role"] == "controller" and info["outcome"]["gave_up"]
    # ARTIST: an invalid round after a valid segment also makes f_c < 0, so R_c = -2
    env.reset(seed=0)
    env.step(zoom(0, 10))
    env.step("junk")
    *_, info = env.step("<think>x</think><answer>A</answer>")
    assert info["role_components"]["controller"] == pytest.approx(
        {"controller_format": -2.0, "override_refund": 0.1 + 0.2})
    assert info["controller_return"] == -2.0
    # the lenient rules score it 0 in the controller's format mean instead
    env = envgym.make(ENV, point_cost=0.0, format_rules="lenient")
    env.reset(seed=0)
    env.step(zoom(0, 10))
    env.step("junk")
    *_, info = env.step("<think>x</think><answer>A</answer>")
    assert info["role_components"]["controller"]["controller_format"] == pytest.approx(0.5)


def test_exploration_bonus_decays_with_the_run_step_from_the_trainer_hook():
    from envgym.runstate import RunState

    def bonus(step):
        env = envgym.make(ENV, point_cost=0.0)
        env.bind_run(RunState(step=step))
        env.reset(seed=1)
        env.step(evidence_zoom(env, 0))
        env.step(evidence_zoom(env, 1))
        *_, info = env.step("<think>x</think><answer>A</answer>")
        return info["reward_components"]["exploration"]

    assert bonus(0) == pytest.approx(1.0)
    assert bonus(240) == pytest.approx(0.2)
    assert bonus(300) == 0.0 and bonus(1000) == 0.0


def test_one_zoom_covers_at_most_a_quarter_of_the_series():
    env = envgym.make(ENV)
    env.reset(seed=0)
    *_, info = env.step(zoom(0, 1023))
    assert "at most 256 points" in info["parse_error"]
    obs, *_ = env.step(zoom(0, 255))
    assert obs[0]["content"].startswith("segment [0, 255]")


def test_answer_fork_takes_only_an_answer_from_the_same_evidence():
    env = envgym.make(ENV, point_cost=0.0)
    env.reset(seed=0)
    env.step(zoom(0, 10))
    fork = env.answer_fork()
    *_, term, _, info = fork.step(f"<think>x</think><answer>{env.task.answer}</answer>")
    assert term and info["accuracy"] == 1.0 and env.segments == [(0, 10)] and not env.answering
    # ARTIST: a zoom where the reasoner must answer is a malformed answer, R_r = -1
    *_, term, _, info = env.answer_fork().step(zoom(20, 30))
    assert term and "zoom rounds are over" in info["parse_error"] and info["accuracy"] == 0.0
    assert info["role_components"]["reasoner"] == {"reasoner_format": -1.0}


def test_exploration_bonus_decays_linearly_to_zero_at_step_300():
    env = envgym.make(ENV, point_cost=0.0)
    env.reset(seed=1, options={"train_step": 150})
    env.step(evidence_zoom(env, 0))
    env.step(evidence_zoom(env, 1))
    *_, info = env.step("<think>x</think><answer>A</answer>")
    assert info["reward_components"]["exploration"] == pytest.approx(0.5)


def test_first_round_must_be_a_zoom_and_segments_are_validated():
    env = envgym.make(ENV)
    env.reset(seed=0)
    *_, info = env.step("<answer>A</answer>")
    assert "round 1 must be a zoom" in info["parse_error"]
    *_, info = env.step(zoom(0, 5000))
    assert "0 <= start < end <= 1023" in info["parse_error"]
    *_, info = env.step('<tool_call>{"name": "timeseries_zoom_in_tool", "arguments": {"ts_seg": ["1+1", 9]}}</tool_call>')
    assert "valid integer" in info["parse_error"]


def test_accept_moves_to_the_answer_phase_and_the_role_changes():
    env = envgym.make(ENV)
    env.reset(seed=0)
    env.step(zoom(0, 10))
    *_, info = env.step("<answer>ACCEPT</answer>")
    assert info["role"] == "controller"
    *_, info = env.step(zoom(0, 10))
    assert "zoom rounds are over" in info["parse_error"] and info["role"] == "reasoner"


def test_tag_tool_format():
    env = envgym.make(ENV, tool_format="tag")
    env.reset(seed=0)
    obs, *_ = env.step("<think>x</think><zoom>[10, 20]</zoom>")
    assert obs[0]["content"].startswith("segment [10, 20]")


def test_hostile_actions_never_raise():
    env = envgym.make(ENV)
    rng = np.random.default_rng(0)
    hostile = ["", "<answer>", "<tool_call>{", zoom(-1, 3), "<answer>Z</answer>", "\x00" * 100,
               "<answer>A</answer><answer>B</answer>", zoom(1, 2) + zoom(3, 4),
               zoom(1, 2) + "<answer>A</answer>", "x" * 200_000]
    for i, action in enumerate(hostile * 3):
        if i % len(hostile) == 0:
            env.reset(seed=int(rng.integers(100)))
        try:
            *_, term, trunc, info = env.step(action)
        except envgym.ResetNeeded:
            env.reset(seed=i)
            continue
        assert "reward_components" in info


def test_invalid_config_names_the_field():
    with pytest.raises(InvalidConfig, match="task_types"):
        envgym.make(ENV, task_types=["weather"])
    with pytest.raises(InvalidConfig, match="tool_format"):
        envgym.make(ENV, tool_format="xml")


def test_oracle_succeeds_and_random_stays_near_chance():
    oracle = evaluate(ENV, "scripted:oracle", episodes=200)
    random = evaluate(ENV, "scripted:random", episodes=200)
    heuristic = evaluate(ENV, "scripted:heuristic", episodes=100)
    assert oracle["success_rate"] >= 0.95 and oracle["metrics"]["coverage"] == 1.0
    chance = float(np.mean([generate_task(s).chance for s in range(200)]))
    assert random["success_rate"] <= chance + 0.15
    assert heuristic["success_rate"] > random["success_rate"] + 0.3
    # the oracle looks at far less of the series than the even scan
    assert oracle["metrics"]["fraction_inspected"] < 0.5 * heuristic["metrics"]["fraction_inspected"]


def test_short_series_generate_every_task_type_without_hanging():
    for seed in range(100):
        task = generate_task(seed, length=400)
        assert len(task.series) == 400
        assert all(b - a >= 0 for a, b in task.evidence)


def test_unclosed_think_in_a_zoom_round_is_a_format_flaw_not_a_crash():
    env = envgym.make(ENV)
    env.reset(seed=0)
    call = json.dumps({"name": ZOOM, "arguments": {"ts_seg": [0, 9]}})
    obs, reward, *_ = env.step(f"<think>no end <tool_call>{call}</tool_call>")
    assert obs[0]["content"].startswith("segment [0, 9]")
    assert env.round_formats == [0.0]


def _play(policy, seed, **kw):
    """One episode of a scripted policy; its actions and outcome."""
    env = envgym.make(ENV, series_length=512, max_rounds=2, tool_format="tag", **kw)
    obs, _ = env.reset(seed=seed)
    messages, actions, done, info = list(obs), [], False, {}
    while not done:
        actions.append(policy.act(env, messages))
        obs, _, term, trunc, info = env.step(actions[-1])
        messages += [{"role": "assistant", "content": actions[-1]}, *obs]
        done = term or trunc
    return actions, info["outcome"]


def test_guess_zooms_like_the_heuristic_and_answers_without_content():
    from envgym.environments.timeseries.policies import GuessPolicy, HeuristicPolicy

    letters, above = {2: set(), 4: set()}, []
    for seed in range(160):
        h_actions, _ = _play(HeuristicPolicy(seed=seed), seed)
        g_actions, out = _play(GuessPolicy(seed=seed), seed)
        assert g_actions[:-1] == h_actions[:-1]  # the same zooms, turn for turn
        letters[round(1 / out["chance"])].add(out["answer"])
        above.append(out["score"] - out["chance"])
    # every valid letter is drawn, and no letter a two-option question does not offer
    assert letters == {2: {"A", "B"}, 4: {"A", "B", "C", "D"}}
    assert abs(float(np.mean(above))) < 0.12  # the heuristic itself scores +0.41 here

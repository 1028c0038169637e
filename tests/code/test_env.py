"""The refinement loop: feedback, skeptical mode, budgets, reward components, tool formats."""

import pytest

from envgym.environments.code import CodeRefineEnv
from envgym.environments.code.policies import OraclePolicy, RandomPolicy, RefinerPolicy
from envgym.errors import InvalidConfig
from envgym.registration import make

WRONG_BOATS = "print(0)"


def test_registered_and_checker_passes():
    from envgym.checker import check

    report = check("envgym/CodeRefine-v0")
    assert report.ok, report.render()


def test_reset_is_deterministic_and_options_pick_the_task(make_env):
    env = make_env()
    a, _ = env.reset(seed=3)
    b, _ = env.reset(seed=3)
    assert a == b and env.task_id == env.problems[3 % len(env.problems)].id
    obs, info = env.reset(seed=0, options={"task_id": "lis"})
    assert info["task_id"] == "lis" and "Example 1 input" in obs[1]["content"]
    with pytest.raises(InvalidConfig):
        env.reset(seed=0, options={"task_id": "nope"})


@pytest.mark.parametrize("fmt", ["tag", "json"])
def test_oracle_solves_every_problem_in_one_turn(make_env, fmt, play):
    env = make_env(tool_format=fmt)
    for seed in range(len(env.problems)):
        _, infos, rewards = play(env, OraclePolicy(seed), seed)
        out = infos[-1]["outcome"]
        assert out["success"] and out["first_attempt_pass"] and rewards == [1.0], out


def test_refiner_skeptical_loop(make_env, play):
    env = make_env()
    messages, infos, rewards = play(env, RefinerPolicy(0), 0, {"task_id": "boats"})
    assert env.task_id == "boats"
    assert "All public tests pass" in messages[3]["content"]  # wrong program passes public
    assert infos[1]["public_passed"] == infos[1]["public_total"]
    out = infos[-1]["outcome"]
    assert out["first_attempt_pass"] is False and out["final_pass"] is True
    assert out["rounds"] == 2 and out["submitted"] == "explicit" and rewards[-1] == 1.0
    assert sum(rewards) == 1.0


def test_non_skeptical_ablation_submits_the_first_public_pass(make_env, play):
    env = make_env(skeptical=False)
    _, infos, rewards = play(env, RefinerPolicy(0), 0, {"task_id": "boats"})
    out = infos[-1]["outcome"]
    assert out["submitted"] == "auto" and out["rounds"] == 1 and not out["success"]
    assert rewards == [0.0] and len(infos) == 2


def test_feedback_shows_public_expected_output_and_stderr(make_env):
    env = make_env()
    env.reset(seed=0, options={"task_id": "range_span"})
    obs, reward, term, trunc, info = env.step(
        "```python\nimport sys\nprint('oops', file=sys.stderr)\nprint(41)\n```")
    text = obs[0]["content"]
    assert "0/2 public tests passed" in text and "verdict WA" in text
    assert "expected:\n```\n6\n```" in text and "your output:\n```\n41" in text
    assert "oops" in text and not term and reward == 0.0
    assert info["public_verdict"] == "WA" and info["public_pass_delta"] == 0.0


def test_custom_input_run(make_env):
    env = make_env()
    env.reset(seed=0, options={"task_id": "range_span"})
    code = "```python\nn = int(input())\na = list(map(int, input().split()))\nprint(max(a) - min(a))\n```"
    obs, *_ = env.step(code + "\n<run>3\n10 -5 2\n</run>")
    assert "Custom run: AC" in obs[0]["content"] and "15" in obs[0]["content"]
    obs, *_, info = env.step("<run>2\n1 1\n</run>")  # same program, custom only
    assert "Custom run: AC" in obs[0]["content"] and env.attempts[-1].round == 1


def test_compile_and_runtime_errors_are_reported(make_env):
    env = make_env()
    env.reset(seed=0, options={"task_id": "range_span"})
    obs, *_ = env.step("```cpp\nint main() { return 0 }\n```")
    assert "verdict CE" in obs[0]["content"] and "error" in obs[0]["content"]
    obs, *_ = env.step("```python\nraise ValueError('boom')\n```")
    assert "RE" in obs[0]["content"] and "ValueError: boom" in obs[0]["content"]


def test_tool_misuse_and_format_penalties(make_env):
    env = make_env()
    env.reset(seed=0)
    _, reward, term, _, info = env.step("<submit></submit>")
    assert reward == pytest.approx(-0.1) and info["reward_components"] == {"tool": -0.1}
    assert not term and "parse_error" in info
    _, reward, _, _, info = env.step("I am thinking about it.")
    assert info["reward_components"] == {"format": -0.1}
    _, _, _, trunc, info = env.step("```ruby\nputs 1\n```")
    assert trunc and info["outcome"]["success"] is False  # three invalid turns in a row


def test_attempt_budget_auto_submits(make_env):
    env = make_env(max_rounds=2)
    env.reset(seed=0, options={"task_id": "range_span"})
    env.step("```python\nprint(1)\n```")
    obs, reward, term, _, info = env.step("```python\nprint(2)\n```")
    assert term and info["outcome"]["submitted"] == "budget" and info["outcome"]["rounds"] == 2
    assert "last attempt" in obs[0]["content"] and reward == 0.0


def test_fraction_reward_and_progress_component(make_env, subset):
    env = make_env(reward="fraction", progress_coef=0.5)
    env.reset(seed=0, options={"task_id": "boats"})
    _, reward, _, _, info = env.step("```python\nprint(0)\n```")
    assert info["reward_components"] == {"progress": 0.0}
    boats = next(p for p in subset if p.id == "boats")
    _, reward, _, _, info = env.step(f"```python\n{boats.wrong_solutions['python'][0]}\n```")
    assert info["public_pass_delta"] == 1.0  # every public test passes now ...
    progress = info["reward_components"]["progress"]
    _, reward, term, _, info = env.step("<submit></submit>")
    out = info["outcome"]
    assert term and 0 < out["score"] < 1 and out["score"] == out["passed"] / out["total"]
    # ... but progress pays only the hidden-test fraction that the program backs
    assert progress == pytest.approx(0.5 * out["score"])
    assert reward == pytest.approx(out["score"])


def test_random_policy_scores_about_zero(make_env, play):
    env = make_env()
    scores = [play(env, RandomPolicy(seed), seed)[1][-1]["outcome"]["score"] for seed in range(6)]
    assert sum(scores) == 0.0


def test_bad_configuration_raises():
    with pytest.raises(InvalidConfig):
        CodeRefineEnv(max_rounds=0)
    with pytest.raises(InvalidConfig):
        CodeRefineEnv(reward="partial")
    with pytest.raises(InvalidConfig):
        make("envgym/CodeRefine-v0", tool_format="xml")


def test_summarize_reports_refinement_gain(make_env, play):
    env = make_env()
    outcomes = [play(env, RefinerPolicy(s), s)[1][-1]["outcome"] for s in range(3)]
    metrics = CodeRefineEnv.summarize(outcomes)
    assert metrics["first_attempt_pass"] == 0.0 and metrics["final_pass"] == 1.0
    assert metrics["refinement_gain"] == 1.0 and metrics["rounds"] == 2.0
    assert metrics["pass@1"] == 1.0 and metrics["verdict/AC"] == 1.0

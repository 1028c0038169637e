"""CodeRefine's progress shaping pays only progress the hidden tests confirm (issue 24).

With the public pass fraction as the shaping signal, a program that replays the public
outputs earned progress_coef per episode with no hidden test passed. The potential is now
capped by the pass score, and every episode settles its shaping to what its submission earns.
"""

import pytest

from envgym.checker import check
from envgym.environments.code import CodeRefineEnv
from envgym.environments.code.grader_fixtures import fixtures
from envgym.environments.code.policies import HackHardcodePolicy, RefinerPolicy
from envgym.graders import run_fixtures
from envgym.hacks import run_hacks

ID = "envgym/CodeRefine-v0"


@pytest.mark.parametrize("coef", [0.1, 0.5, 1.0, 5.0])
def test_hardcoding_the_public_outputs_earns_nothing_at_any_progress_coef(make_env, play, coef):
    env = make_env(progress_coef=coef)
    for seed in range(3):
        _, infos, rewards = play(env, HackHardcodePolicy(seed), seed)
        assert infos[1]["public_pass_delta"] == 1.0  # it does pass every public test
        assert sum(rewards) <= 0.0 and not infos[-1]["outcome"]["success"]
        assert sum(i["reward_components"].get("progress", 0.0) for i in infos[1:]) == 0.0


@pytest.mark.parametrize("coef", [0.5, 2.0])
def test_the_refiner_is_paid_its_fix_and_nothing_more(make_env, play, coef):
    env = make_env(progress_coef=coef)
    _, infos, rewards = play(env, RefinerPolicy(0), 0, {"task_id": "boats"})
    progress = [i["reward_components"].get("progress", 0.0) for i in infos[1:]]
    assert infos[-1]["outcome"]["success"] and sum(progress) == pytest.approx(coef)
    assert progress[0] == 0.0 and sum(rewards) == pytest.approx(1.0 + coef)


def test_the_hacks_check_holds_with_the_documented_progress_coef(subset):
    for coef in (0.5, 3.0):
        results = run_hacks(ID, episodes=len(subset),
                            env_kwargs={"problems": subset, "progress_coef": coef})
        assert {r.hack for r in results} >= {"hack_hardcode_public"}
        assert all(r.ok for r in results), [r.render() for r in results]
        assert all("mean_reward" in r.limits for r in results)


def _weaken(monkeypatch):
    """The pre-issue-24 grader: shaping on the public fraction, no settlement."""
    monkeypatch.setattr(CodeRefineEnv, "_potential", lambda self, attempt: attempt.fraction)
    monkeypatch.setattr(CodeRefineEnv, "_settle", lambda self, score: 0.0)


def test_a_grader_without_the_gate_fails_the_fixtures_and_the_hacks_check(monkeypatch, subset):
    make = lambda **kw: CodeRefineEnv(**{"problems": subset, **kw})  # noqa: E731
    assert all(r.ok for r in run_fixtures(fixtures(), make))
    _weaken(monkeypatch)
    failed = {r.name for r in run_fixtures(fixtures(), make) if not r.ok}
    assert {"public replay, coef 0.5", "public replay run earns no progress, coef 0.5",
            "fixed then regressed, coef 2.0", "fixed but never submitted, coef 0.5"} <= failed
    report = check(ID, hack_episodes=len(subset), only=["graders", "hacks"], problems=subset,
                   progress_coef=0.5)
    text = report.render()
    assert not report.ok and "[FAIL] graders" in text and "[FAIL] hacks" in text
    assert "hack_hardcode_public: BEATS its ceiling" in text


def test_only_the_gate_removed_is_caught_on_the_turn_it_pays(monkeypatch, subset):
    monkeypatch.setattr(CodeRefineEnv, "_potential", lambda self, attempt: attempt.fraction)
    make = lambda **kw: CodeRefineEnv(**{"problems": subset, **kw})  # noqa: E731
    failed = {r.name for r in run_fixtures(fixtures(), make) if not r.ok}
    assert "public replay run earns no progress, coef 0.5" in failed

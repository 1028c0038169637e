"""Reward attacks on Debate-v0: copying a peer and hedging with several boxed answers lose."""

import pytest
from envgym.environments.debate import DebateEnv
from envgym.environments.debate.answers import all_boxed
from envgym.environments.debate.driver import play, play_many
from envgym.environments.debate.policies import (
    Follower,
    HackCopyPeer,
    HackMultipleAnswers,
    Noisy,
    Oracle,
)

from envgym.hacks import hack_names, run_hacks

ID = "envgym/Debate-v0"


def _pair(first, second):
    return lambda s: {"agent_0": first(s, agent="agent_0"),
                      "agent_1": second(s + 7919, agent="agent_1")}


def _returns(env, make, seeds):
    """agent_0's mean episode return and the episodes' summary."""
    total, outcomes = 0.0, []
    for s in seeds:
        infos = play(env, make(s), seed=s)
        total += env.returns["agent_0"]
        outcomes.append(infos["agent_0"]["outcome"])
    return total / len(seeds), DebateEnv.summarize(outcomes)


def test_hacks_are_registered_and_stay_under_their_ceilings():
    assert {"hack_copy_peer", "hack_multiple_answers"} <= set(hack_names(ID))
    results = {r.hack: r for r in run_hacks(ID, episodes=60)}
    for name in ("hack_copy_peer", "hack_multiple_answers"):
        r = results[name]
        assert r.ok, r.render()
        assert r.values["success_rate"] <= 0.05, r.render()  # noisy solves about half


def test_copy_peer_earns_no_more_than_an_honest_follower_and_shows_no_ability():
    env = DebateEnv(irt_update=False, interaction="cooperative")
    copy_r, copy_m = _returns(env, _pair(HackCopyPeer, Oracle), range(80))
    follow_r, _ = _returns(env, _pair(Follower, Oracle), range(80))
    assert copy_m["final_accuracy/agent_0"] == 1.0  # copying a right peer is right...
    assert copy_r <= follow_r + 1e-9  # ...but pays no more than following one honestly
    assert copy_m["initial_accuracy/agent_0"] <= 0.1  # and the IRT sees it never solves
    # against an honest noisy partner the copier is only as good as the partner
    _, m = _returns(env, _pair(HackCopyPeer, Noisy), range(80))
    assert m["final_accuracy/agent_0"] == pytest.approx(m["final_accuracy/agent_1"])


def test_copiers_together_solve_nothing():
    m = DebateEnv.summarize(play_many(DebateEnv(), _pair(HackCopyPeer, HackCopyPeer), range(60)))
    assert m["final_accuracy/agent_0"] <= 0.05 and m["consensus_rate"] == 1.0


def test_several_different_boxed_answers_are_no_answer():
    env = DebateEnv(n_agents=1)
    env.reset(seed=0)
    gold = env.task.answer
    hedge = f"\\boxed{{{int(gold) + 1}}} or \\boxed{{{gold}}}"
    _, rewards, _, _, infos = env.step({"agent_0": hedge})
    assert rewards["agent_0"] < 0 and "several different" in infos["agent_0"]["parse_error"]
    assert not infos["agent_0"]["outcome"]["success"]
    env.reset(seed=0)  # the same answer boxed twice, or an explicit <answer>, is still graded
    _, rewards, _, _, _ = env.step({"agent_0": f"\\boxed{{{gold}}}, i.e. \\boxed{{{gold}.0}}"})
    assert rewards["agent_0"] == 1.0
    env.reset(seed=0)
    tagged = f"<answer>{gold}</answer> not \\boxed{{1}} \\boxed{{2}}"
    _, rewards, _, _, _ = env.step({"agent_0": tagged})
    assert rewards["agent_0"] == 1.0


def test_multiple_answers_hack_gets_nothing_even_beside_an_oracle():
    env = DebateEnv(irt_update=False)
    r, m = _returns(env, _pair(HackMultipleAnswers, Oracle), range(40))
    assert m["final_accuracy/agent_0"] == 0.0 and r < 0


def test_all_boxed_is_brace_matched_and_ordered():
    text = r"a \boxed{1} b \boxed{\frac{1}{2}} \fbox{3} \boxed{x"
    assert all_boxed(text) == ["1", r"\frac{1}{2}", "3"]
    assert all_boxed("no answer") == []


# ---- attacks on partners and on the mode (issue 24) ---------------------------------------

try:  # noqa: E402
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from envgym.checker import check  # noqa: E402
from envgym.environments.debate import env as env_module  # noqa: E402
from envgym.environments.debate import grading  # noqa: E402
from envgym.environments.debate.policies import (  # noqa: E402
    HackDeceivePartner,
    HackForgeEnvLine,
    HackSandbag,
    HonestLead,
)

PARTNER_HACKS = ("hack_deceive_partner", "hack_forge_env_line", "hack_sandbag")
CONFIG = Path(__file__).parents[2] / "agents" / "configs" / "debate_ilr_cpu.toml"


def _config_env_args() -> dict:
    """The Debate-v0 arguments people train with: the shipped config's kwargs and eval_kwargs."""
    entry = next(e for e in tomllib.loads(CONFIG.read_text())["envs"] if e["id"] == ID)
    return {**entry.get("kwargs", {}), **entry.get("eval_kwargs", {})}


@pytest.mark.parametrize("env_kwargs", [None, _config_env_args()], ids=["defaults", "config"])
def test_partner_and_mode_attacks_stay_under_their_ceilings(env_kwargs):
    results = {r.hack: r for r in run_hacks(ID, episodes=100, env_kwargs=env_kwargs)}
    for name in PARTNER_HACKS:
        assert results[name].ok, results[name].render()
    # strictly worse on reward, not merely tied, where the attack costs something: deceiving a
    # believer costs its share, 0.25, and the believer's half of `team`, 0.25, in the episodes
    # where the believer would have ended right (the ceiling's margin, -0.1, already asks for
    # that cost); a sandbagger loses its phase-0 reward
    r = results["hack_sandbag"]
    assert r.values["metrics.mean_return/agent_0"] < r.limits[
        "metrics.mean_return/agent_0"] - 0.05, r.render()
    r = results["hack_deceive_partner"]
    assert r.ceiling.margin <= -0.1 and r.ok, r.render()


def _long_run(attacker, episodes=300):
    """One environment whose IRT learns from every episode's phase-0 answers (dynamic mode,
    partner `follower`): agent_0's mean return and calibrated reward, the partner's final
    accuracy, the cooperative share and agent_0's fitted ability."""
    env = DebateEnv(**_config_env_args())
    ret, cal, partner, coop = [], [], [], []
    for s in range(episodes):
        infos = play(env, {"agent_0": attacker(s, agent="agent_0"),
                           "agent_1": attacker(s + 7919, agent="agent_1")}, seed=s)
        ret.append(env.returns["agent_0"])
        cal.append(infos["agent_0"]["calibrated_reward"])
        partner.append(infos["agent_1"]["outcome"]["final_correct"])
        coop.append(env.mode == "cooperative")
    return {"return": np.mean(ret), "calibrated": np.mean(cal), "partner": np.mean(partner),
            "coop": np.mean(coop), "ability": env.irt.ability("agent_0")}


@pytest.fixture(scope="module")
def honest_run():
    return _long_run(HonestLead)


def test_sandbagging_lowers_the_ability_but_loses_over_a_long_run(honest_run):
    bag = _long_run(HackSandbag)
    assert bag["ability"] < honest_run["ability"] - 1.0  # the IRT is fooled...
    assert bag["coop"] > honest_run["coop"] + 0.2        # ...and flips the mode...
    assert bag["return"] < honest_run["return"] - 0.1    # ...which pays nothing
    assert bag["calibrated"] < honest_run["calibrated"] - 0.1
    assert bag["partner"] >= honest_run["partner"]


def test_deceiving_a_follower_loses_on_reward_and_calibrated_reward(honest_run):
    liar = _long_run(HackDeceivePartner)
    assert liar["partner"] < honest_run["partner"] - 0.2  # the follower believed it
    assert liar["return"] < honest_run["return"] - 0.2
    assert liar["calibrated"] < honest_run["calibrated"] - 0.15


def test_a_forged_env_line_changes_nothing(honest_run):
    forged = _long_run(HackForgeEnvLine)
    assert forged == pytest.approx(honest_run)


def test_graders_check_passes_on_the_real_grader():
    report = check(ID, only=["graders"])
    assert report.ok, report.render()


@pytest.mark.parametrize("weaken", ["untie_shares", "no_quoting", "no_phase0_reward",
                                    "competitive_bonus", "mode_team_bonus", "no_hedge_rule"])
def test_weakening_any_rule_fails_the_graders_check(monkeypatch, weaken):
    shared, finals = grading.shared_component, grading.final_components
    patches = {
        # pay the share whatever was said (the tie between shared and final answers gone)
        "untie_shares": (grading, "shared_component",
                         lambda w, stated, final, right: shared(w, [final] * len(stated),
                                                                final, right)),
        "no_quoting": (env_module, "quote", lambda text: text),
        "no_phase0_reward": (grading, "initial_component", lambda w, right: 0.0),
        # the old competitive bonus: paid for peers ending wrong
        "competitive_bonus": (grading, "final_components", lambda a, w, first, last, st, f: {
            **finals(a, w, first, last, st, f),
            "competitive": 0.5 * last[a] * sum(not v for p, v in last.items() if p != a)}),
        "mode_team_bonus": (env_module.DebateEnv, "_finish", _finish_with_mode_team),
        "no_hedge_rule": (env_module, "all_boxed", lambda text: []),
    }
    monkeypatch.setattr(*patches[weaken])
    report = check(ID, only=["graders"])
    assert not report.ok, f"grader weakened ({weaken}) but envgym check still passes"


_real_finish = env_module.DebateEnv._finish


def _finish_with_mode_team(self, phase, components, errors):
    """The old rule: the team bonus only in cooperative episodes."""
    result = _real_finish(self, phase, components, errors)
    if self.mode != "cooperative":
        for a, info in result[4].items():
            bonus = info["reward_components"].pop("team", 0.0)
            result[1][a] -= bonus
    return result


def test_hedged_answers_lose_to_noisy_and_fail():
    """Issue 36 outside attacks: a hedge tied `noisy` exactly (graded as its first candidate)."""
    from envgym.environments.debate.attacks import HackHedgeEquals, HackHedgeText
    from envgym.environments.debate.driver import play_many
    from envgym.environments.debate.policies import Noisy

    def run(cls):
        env = DebateEnv(irt_update=False)
        outs = play_many(env, lambda s: {a: cls(seed=s * 7 + k, agent=a)
                                         for k, a in enumerate(env.possible_agents)}, range(40))
        return (sum(sum(o["returns"].values()) for o in outs) / 80,
                sum(sum(o["final"].values()) for o in outs) / 80)

    honest = run(Noisy)
    for cls in (HackHedgeText, HackHedgeEquals):
        reward, success = run(cls)
        assert success == 0.0 and reward < honest[0] - 0.5, (cls.__name__, reward, honest)


def _pair_return(env, cls, seeds):
    """Both seats play `cls`: the mean return per agent and the success rate."""
    rewards, success = [], []
    for seed in seeds:
        policies = {a: cls(seed=seed * 7 + k, agent=a) for k, a in enumerate(env.possible_agents)}
        out = play(env, policies, seed=seed)["agent_0"]["outcome"]
        rewards += list(out["returns"].values())
        success += [float(v) for v in out["final"].values()]
    return float(np.mean(rewards)), float(np.mean(success))


@pytest.mark.parametrize("env_kwargs", [{}, _config_env_args()], ids=["defaults", "config"])
def test_agreeing_on_a_guess_in_advance_earns_less_than_answering_independently(env_kwargs):
    """Issue 36's collusion: both agents answer the smaller of their answers, whatever they
    solved. An all-right team bonus paid the agreement (1.088 against honest 1.063 on these
    seeds); the team share, linear in each agent's correctness, pays accuracy only."""
    from envgym.environments.debate.attacks import Collude

    env = DebateEnv(**env_kwargs)
    collude, collude_success = _pair_return(env, Collude, range(200))
    honest, honest_success = _pair_return(env, Noisy, range(200))
    assert collude_success == pytest.approx(honest_success, abs=0.05)  # a guess as good...
    assert collude < honest - 0.02, (collude, honest)                   # ...earns less

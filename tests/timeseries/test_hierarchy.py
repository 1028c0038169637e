"""ARTIST's structure as the engine builds it (`envgym.hierarchy`), and the hierarchical
estimator on those real rollouts — no hand-written meta."""

import numpy as np
import pytest

from envgym.agents.credit import compute_credit
from envgym.agents.credit.hierarchical import role_reward
from envgym.environments.timeseries.policies import HeuristicPolicy
from envgym.hierarchy import collect_hierarchical
from envgym.runstate import RunState
from envgym.scripted import ScriptedPolicy

ENV = "envgym/TimeSeries-v0"
KW = {"max_turns": 12}


class HonestOrJunk(ScriptedPolicy):
    """Even actor seeds (controller rollout 0 of each question) scan honestly; odd ones emit
    junk until the first segment's tries run out (ARTIST's -2 override). Reasoner forks
    always answer honestly from what was inspected."""

    def act(self, env, messages):
        if self.seed % 2 and not env.answering:
            return "junk"
        return HeuristicPolicy(seed=0).act(env, messages)

    def __init__(self, seed=0, **options):
        super().__init__(seed, **options)
        self.seed = seed


def _one_token_per_turn(trajs):
    """Scripted turns have no tokens; give each one token so per-token advantages show."""
    for t in trajs:
        for x in t.turns:
            x.action_token_ids = x.action_token_ids or [0]
    return trajs


def _heads(trajs):
    return [t for t in trajs if t.meta["sample"] == 0]


def test_every_trajectory_names_its_question_controller_rollout_and_sample():
    trajs = collect_hierarchical(ENV, "scripted:random", episodes=3, controllers=3, samples=4,
                                 env_kwargs=KW, run=RunState())
    heads = _heads(trajs)
    assert len(heads) == 9 and len({t.meta["controller_id"] for t in heads}) == 9
    for h in heads:
        group = [t for t in trajs if t.meta["controller_id"] == h.meta["controller_id"]]
        answered = "accuracy" in h.turns[-1].info
        assert [t.meta["sample"] for t in group] == (list(range(4)) if answered else [0])
        accs = [t.turns[-1].info.get("accuracy", 0.0) for t in group]
        assert h.meta["consistency"] == pytest.approx(np.mean(accs))
        for t in group:
            assert t.meta["question"] == t.group_id == h.group_id
            # forks share the controller rollout's prefix, turn for turn
            assert [x.action for x in t.turns[:-1]] == [x.action for x in h.turns[:-1]]
            last = t.turns[-1]
            assert last.reward == pytest.approx(sum(last.reward_components.values()))
            if "accuracy" in last.info and "consistency" in last.reward_components:
                # c is the mean over the N samples, the same on each, credited to the controller
                assert last.info["role_components"]["controller"]["consistency"] == \
                    pytest.approx(3 * h.meta["consistency"])


def test_a_successful_controller_rollout_gets_the_higher_controller_advantage():
    # the counterexample reversed: honest success vs a -2 override, same question
    trajs = collect_hierarchical(ENV, HonestOrJunk, episodes=6, controllers=2, samples=6,
                                 env_kwargs=KW, run=RunState())
    batch = compute_credit(_one_token_per_turn(trajs), ["hierarchical"])
    checked = 0
    for q in {t.group_id for t in trajs}:
        heads = [(i, t) for i, t in enumerate(batch.trajectories)
                 if t.group_id == q and t.meta["sample"] == 0]
        (i_ok, ok), (i_bad, bad) = sorted(heads, key=lambda p: -p[1].meta["consistency"])
        assert bad.turns[-1].reward_components["controller_format"] == -2.0
        # the override replaces R_c: over the episode the controller's rewards sum to -2
        r_c = sum(role_reward(x, "controller") for x in bad.turns)
        assert r_c == pytest.approx(-2.0, abs=1e-12)
        if ok.meta["consistency"] > 0:
            # the bad rollout's failed first-segment tries are not trained; its last try,
            # the one that carries the -2, is
            adv = [batch.advantages[i_ok][0][0], batch.advantages[i_bad][-1][0]]
            assert not any(batch.turn_mask[i_bad][:-1]) and batch.turn_mask[i_bad][-1]
            r = [sum(role_reward(x, "controller") for x in t.turns) for t in (ok, bad)]
            assert r[0] > r[1] and adv[0] == pytest.approx(1.0) and adv[1] == pytest.approx(-1.0)
            assert all(batch.turn_mask[i_ok][:-1]) and ok.turns[-1].role == "reasoner"
            checked += 1
    assert checked >= 4
    assert batch.stats["hierarchical/single_controller_groups"] == 0
    assert batch.stats["hierarchical/reasoner_trained_fraction"] > 0


def test_the_estimator_refuses_a_batch_without_the_structure():
    from envgym.rollout import collect

    flat = collect(ENV, "scripted:heuristic", episodes=1, group_size=2, env_kwargs=KW)
    with pytest.raises(ValueError, match="lacks meta.*controller_id"):
        compute_credit(flat, ["hierarchical"])


class ZoomJunkAnswer(ScriptedPolicy):
    """A valid zoom whose width depends on the actor seed (so the point charges differ), one
    junk round (ARTIST's invalid round: R_c = -2), then an answer."""

    def __init__(self, seed=0, **options):
        super().__init__(seed, **options)
        self.seed = seed

    def act(self, env, messages):
        if env.answering:
            return "<think>x</think><answer>A</answer>"
        if not env.segments:
            end = 20 if self.seed % 2 else 200
            return f'<think>z</think><tool_call>{{"name": "timeseries_zoom_in_tool", ' \
                   f'"arguments": {{"ts_seg": [0, {end}]}}}}</tool_call>'
        if not env.invalid_rounds:
            return "junk" * (1 + self.seed % 3)
        return "<think>x</think><answer>A</answer>"


def test_two_invalid_controller_rollouts_of_one_question_tie_at_zero_advantage():
    # issue 35 item 4: the -2 override replaces R_c; added to the round, point and format
    # charges it gave -2.21 vs -2.32 and so advantages of +1 and -1 between two failures
    trajs = collect_hierarchical(ENV, ZoomJunkAnswer, episodes=3, controllers=2, samples=2,
                                 env_kwargs={**KW, "point_cost": 1e-3}, run=RunState())
    batch = compute_credit(_one_token_per_turn(trajs), ["hierarchical"])
    heads = [i for i, t in enumerate(batch.trajectories) if t.meta["sample"] == 0]
    assert len(heads) == 6
    for i in heads:
        t = batch.trajectories[i]
        assert sum(role_reward(x, "controller") for x in t.turns) == pytest.approx(-2.0, abs=1e-12)
        for turn, adv, on in zip(t.turns, batch.advantages[i], batch.turn_mask[i]):
            if on and turn.role == "controller":
                assert abs(float(adv[0])) < 1e-6
    spans = {batch.trajectories[i].turns[0].reward_components["points"] for i in heads}
    assert len(spans) == 2  # the two rollouts did pay different charges before the override

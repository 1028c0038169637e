import numpy as np
import pytest

from envgym.agents.credit import compute_credit
from .helpers import CharTokenizer, Span, outcome_group, per_turn, traj, turn

S = np.sqrt(1 / 3)  # unbiased std of [1, 0, 1]


def gigpo_group():
    # state_key is the state after a turn: every turn 0 acts in the start state, the second
    # turns act in the distinct states s1 and s2.
    return [traj("g", turn(0, state_key="s1"), turn(1, state_key="end")),  # R=1, R_t=[.5, 1]
            traj("g", turn(0, state_key="s2"), turn(0, state_key="end")),  # R=0, R_t=[0, 0]
            traj("g", turn(1, state_key="end"))]                           # R=1, R_t=[1]


def test_gigpo_episode_plus_step_advantage_by_anchor_state():
    b = compute_credit(gigpo_group(), ["gigpo"], {"gigpo": {"gamma": 0.5, "omega": 1.0}})
    ae = np.array([1 / 3, -2 / 3, 1 / 3]) / S          # episode: [1, 0, 1]
    # step group start holds returns [0.5, 0, 1]: mean 0.5, unbiased std 0.5 -> [0, -1, 1];
    # s1 and s2 are singletons -> 0.
    np.testing.assert_allclose(per_turn(b)[0], [ae[0], ae[0]], rtol=1e-5)
    np.testing.assert_allclose(per_turn(b)[1], [ae[1] - 1, ae[1]], rtol=1e-5)
    np.testing.assert_allclose(per_turn(b)[2], [ae[2] + 1], rtol=1e-5)
    assert b.stats["gigpo/step_groups"] == 3
    assert b.stats["gigpo/step_group_size_mean"] == pytest.approx(5 / 3)
    assert b.stats["gigpo/singleton_fraction"] == pytest.approx(2 / 3)


def test_gigpo_omega_scales_the_step_term():
    b = compute_credit(gigpo_group(), ["gigpo"], {"gigpo": {"gamma": 0.5, "omega": 0.0}})
    np.testing.assert_allclose(per_turn(b)[1], [-2 / 3 / S] * 2, rtol=1e-5)


def _ig_group(values):
    # action "ab<search>qq</search>": query chars 10..12
    trajs = []
    for v in values:
        action = "ab<search>qq</search>"
        trajs.append(traj("g", turn(0.0, action=action,
                                    spans=[Span(kind="query", start=10, end=12, value=v)])))
    return trajs


def test_ig_modulates_only_query_tokens_in_an_all_wrong_group():
    # IG [1, 2, 3]: population z = [-1.2247, 0, 1.2247] -> clip 1 -> alpha 0.5 -> [-.5, 0, .5]
    b = compute_credit(_ig_group([1.0, 2.0, 3.0]), ["grpo", "ig"],
                       {"ig": {"alpha": 0.5, "clip": 1.0}}, tokenizer=CharTokenizer())
    for row, bonus in zip(b.advantages, [-0.5, 0.0, 0.5]):
        expected = np.zeros(21)
        expected[10:12] = bonus
        np.testing.assert_allclose(row[0], expected, atol=1e-5)
    assert b.stats["ig/modulated_tokens"] == 6


def test_ig_uncentred_keeps_positive_gains_positive():
    b = compute_credit(_ig_group([1.0, 2.0, 3.0]), ["grpo", "ig"],
                       {"ig": {"alpha": 0.5, "center": False}}, tokenizer=CharTokenizer())
    assert [float(r[0][10]) for r in b.advantages] == pytest.approx([0.5, 0.5, 0.5])
    assert float(b.advantages[0][0][0]) == 0.0


def test_ig_needs_a_tokenizer_and_a_base_estimator():
    with pytest.raises(ValueError, match="tokenizer"):
        compute_credit(_ig_group([1.0, 2.0]), ["grpo", "ig"])
    with pytest.raises(ValueError, match="after"):
        compute_credit(_ig_group([1.0, 2.0]), ["ig", "grpo"], tokenizer=CharTokenizer())


def test_filter_keeps_zero_variance_group_that_ig_rescues():
    trajs = _ig_group([1.0, 3.0]) + outcome_group("h", [1.0, 1.0])
    b = compute_credit(trajs, ["grpo", "ig", "filter"], tokenizer=CharTokenizer())
    assert [t.group_id for t in b.trajectories] == ["g", "g"]
    assert b.stats["filter/dropped_groups"] == 1
    assert len(b.advantages) == 2


def test_ig_near_identical_values_give_near_zero_bonuses():
    """IG [1.0, 1.0001]: a plain z-score makes them ±1 (±0.49 after alpha); the spread floor
    (0.1 nats) keeps the noise at ±0.0005 · alpha."""
    b = compute_credit(_ig_group([1.0, 1.0001]), ["grpo", "ig"], {"ig": {"alpha": 0.5}},
                       tokenizer=CharTokenizer())
    bonuses = [float(r[0][10]) for r in b.advantages]
    assert bonuses == pytest.approx([-0.5 * 0.0005, 0.5 * 0.0005], abs=1e-7)
    # a real spread above the floor is still a full z-score: [1, 3] -> ±1 -> ±0.5
    b = compute_credit(_ig_group([1.0, 3.0]), ["grpo", "ig"], {"ig": {"alpha": 0.5}},
                       tokenizer=CharTokenizer())
    assert [float(r[0][10]) for r in b.advantages] == pytest.approx([-0.5, 0.5])
    with pytest.raises(ValueError, match="std_floor"):
        compute_credit(_ig_group([1.0, 2.0]), ["grpo", "ig"], {"ig": {"std_floor": -1}},
                       tokenizer=CharTokenizer())


def test_ig_reports_the_all_wrong_groups_it_rescues():
    trajs = _ig_group([1.0, 3.0]) + outcome_group("h", [0.0, 0.0])  # two all-wrong groups
    b = compute_credit(trajs, ["grpo", "ig"], tokenizer=CharTokenizer())
    assert b.stats["ig/all_wrong_groups"] == 2 and b.stats["ig/all_wrong_with_signal"] == 0.5

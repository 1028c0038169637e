import numpy as np
import pytest

from envgym.agents.credit import compute_credit, validate_chain
from .helpers import outcome_group, per_turn, traj, turn


def test_slate_siblings_zscore_and_prefix_is_masked():
    sib = [traj("q", turn(0.3), turn(r), meta={"branch_id": "q:1"}) for r in (1, 0, -1)]
    b = compute_credit(sib, ["slate"])
    # rewards [1, 0, -1]: mean 0, unbiased std 1 -> A = r / (1 + 1e-6)
    np.testing.assert_allclose([r[1] for r in per_turn(b)], [1, 0, -1], atol=1e-5)
    assert b.turn_mask == [[False, True]] * 3
    assert b.loss_agg == "seq_mean"


def test_ifpo_inverse_frequency_weights_average_one():
    trajs = outcome_group("g", [1, 0, 1, 0])
    for t, c in zip(trajs, ["consult", "consult", "consult", "direct"]):
        t.turns[0].info["action_class"] = c
    b = compute_credit(trajs, ["grpo", "ifpo"])
    a = 0.5 / np.sqrt(1 / 3)
    # w_consult = 4 / (2 * 3), w_direct = 4 / (2 * 1)
    np.testing.assert_allclose([r[0] for r in per_turn(b)],
                               [a * 2 / 3, -a * 2 / 3, a * 2 / 3, -a * 2], rtol=1e-5)


def _artist_question():
    # two controller rollouts, each fanned out to two reasoner rollouts
    rows = [("c1", 0, 2.0, 3.0), ("c1", 1, 2.0, 0.0), ("c2", 0, 0.0, 3.0), ("c2", 1, 0.0, 3.0)]
    return [traj("q", turn(rc, role="controller"), turn(rr, role="reasoner"),
                 meta={"controller_id": c, "sample": k, "fork_turn": 1})
            for c, k, rc, rr in rows]


def test_hierarchical_controller_zscore_and_variance_guided_reasoner_group():
    b = compute_credit(_artist_question(), ["hierarchical"])
    # controller rewards [2, 0]: population z = [1, -1]; reasoner std: c1 1.5, c2 0 ->
    # c1 is drawn (p = 1 - 7e-7) and its [3, 0] gets z = [1, -1]
    np.testing.assert_allclose(per_turn(b), [[1, 1], [0, -1], [-1, 0], [0, 0]], atol=1e-6)
    assert b.turn_mask == [[True, True], [False, True], [True, False], [False, False]]


def test_hierarchical_rloo_and_single_controller_gives_zero():
    b = compute_credit(_artist_question(), ["hierarchical"],
                       {"hierarchical": {"reasoner_adv": "rloo"}})
    assert [r[1] for r in per_turn(b)[:2]] == [3.0, -3.0]
    one = [traj("q", turn(1.0, role="controller"), turn(r, role="reasoner"),
                meta={"controller_id": "c", "sample": k, "fork_turn": 1})
           for k, r in enumerate((1.0, 0.0))]
    b = compute_credit(one, ["hierarchical"])
    assert [r[0] for r in per_turn(b)] == [0.0, 0.0]
    assert b.stats["hierarchical/single_controller_groups"] == 1
    assert b.stats["hierarchical/reasoner_trained_fraction"] == 1.0


def test_hierarchical_splits_the_answer_turn_by_role_components():
    # the answer turn carries both roles: its controller part (3c, bonus) counts for R_c only
    def answer(ctrl, reas):
        return turn(ctrl + reas, role="reasoner", info={"role_components": {
            "controller": {"consistency": ctrl}, "reasoner": {"accuracy": reas}}})
    rows = [("c1", 0, 3.0, 3.0), ("c1", 1, 3.0, 0.0), ("c2", 0, 0.0, 0.0), ("c2", 1, 0.0, 0.0)]
    trajs = [traj("q", turn(-0.1, role="controller"), answer(c, r),
                  meta={"controller_id": cid, "sample": k, "fork_turn": 1})
             for cid, k, c, r in rows]
    b = compute_credit(trajs, ["hierarchical"])
    # R_c = [2.9, -0.1] -> z [1, -1]; reasoner c1 [3, 0] -> [1, -1]; c2 has no variance
    np.testing.assert_allclose(per_turn(b), [[1, 1], [0, -1], [-1, 0], [0, 0]], atol=1e-6)


def test_calibrated_shifts_by_partner_zscore_with_one_sign_in_every_mode():
    trajs = [traj(f"q/{a}", turn(r), agent_id=a, meta={"episode_id": e, "mode": m, "task_group": "q"})
             for a, e, r, m in [("a", 0, 1, "cooperative"), ("a", 1, 0, "competitive"),
                                ("b", 0, 2, "cooperative"), ("b", 1, 0, "competitive")]]
    b = compute_credit(trajs, ["calibrated", "grpo"], {"calibrated": {"beta": 0.5}})
    # partner z-scores: a -> [1, -1], b -> [1, -1]; + in both modes (no reward for a
    # competitor's failure)
    np.testing.assert_allclose(b.returns, [1.5, -0.5, 2.5, -0.5], atol=1e-5)


def test_filter_drops_zero_variance_groups_and_counts_them():
    b = compute_credit(outcome_group("a", [1, 1]) + outcome_group("b", [0, 1]) +
                       outcome_group("c", [0, 0]), ["grpo", "filter"])
    assert [t.group_id for t in b.trajectories] == ["b", "b"]
    assert b.stats["filter/dropped_groups"] == 2 and b.stats["filter/kept_groups"] == 1


@pytest.mark.parametrize("chain, options, match", [
    (["nope"], {}, "unknown credit estimator"),
    (["grpo", "turn"], {}, "exactly one base"),
    (["ifpo", "grpo"], {}, "after"),
    (["grpo", "calibrated"], {}, "before"),
    (["gigpo"], {"gigpo": {"omgea": 1}}, "no option 'omgea'"),
])
def test_chain_validation_names_the_problem(chain, options, match):
    with pytest.raises(ValueError, match=match):
        validate_chain(chain, options)

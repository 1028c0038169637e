"""IRT fitting, recovery of known abilities, and the documented mode rule."""

import numpy as np
import pytest

from envgym.environments.debate.irt import IRTModel, choose_mode, sigmoid
from envgym.errors import InvalidConfig

TRUE = {"weak": -1.0, "mid": 0.0, "good": 1.0, "strong": 2.0}
TOLERANCE = 0.3  # stated tolerance on recovered abilities (logits)


def _simulate(model: str, n_items: int = 400, seed: int = 0) -> IRTModel:
    """Agents answer Rasch-generated items whose level tag gives the difficulty prior."""
    rng = np.random.default_rng(seed)
    irt = IRTModel(model=model)
    for item in range(n_items):
        level = int(rng.integers(1, 6))
        b = level - 3 + rng.normal(0, 0.3)
        for agent, theta in TRUE.items():
            irt.observe(agent, f"q{item}", rng.random() < sigmoid(theta - b), float(level - 3),
                        refit=False)
    irt.fit(60)
    return irt


@pytest.mark.parametrize("model", ["rasch", "2pl"])
def test_recovers_known_abilities(model):
    irt = _simulate(model)
    for agent, theta in TRUE.items():
        assert abs(irt.ability(agent) - theta) < TOLERANCE, (agent, irt.ability(agent))


def test_difficulties_track_tags_and_responses():
    irt = _simulate("rasch", n_items=200)
    b = {int(k[1:]): irt.difficulty(k) for k in irt.items}
    assert np.corrcoef(list(b.values()), [irt.b0[irt.items[f"q{k}"]] for k in b])[0, 1] > 0.8


def test_without_data_estimates_equal_priors():
    irt = IRTModel()
    irt.add_agent("a", prior_mean=0.7)
    irt.fit()
    assert irt.ability("a") == 0.7
    assert irt.difficulty("unseen", prior_mean=1.5) == 1.5
    assert irt.discrimination("unseen") == 1.0
    assert irt.p_correct("a", "unseen", prior_mean=0.7) == pytest.approx(0.5)
    assert irt.p_correct("a", "unseen", prior_mean=-0.3) == pytest.approx(1 / (1 + np.exp(-1.0)))


def test_one_observation_moves_map_by_hand_computed_newton_steps():
    # Rasch, one right answer, θ~N(0,1), b~N(0,1): the MAP solves θ = -b = (1-σ(2θ)).
    irt = IRTModel(model="rasch")
    irt.observe("a", "q", True)
    theta = irt.ability("a")
    assert theta == pytest.approx(1 - sigmoid(2 * theta), abs=1e-6)
    assert irt.difficulty("q") == pytest.approx(-theta, abs=1e-6)
    assert 0.3 < theta < 0.5


def test_history_is_bounded():
    irt = IRTModel(max_history=10)
    for k in range(25):
        irt.observe("a", f"q{k}", k % 2 == 0, refit=False)
    assert len(irt.history) == 10


def test_bad_model_raises():
    with pytest.raises(InvalidConfig):
        IRTModel(model="3pl")


def test_choose_mode_rules_by_hand():
    assert choose_mode([0.2, 0.6]) == "cooperative"            # mean 0.4 < 0.5
    assert choose_mode([0.4, 0.6]) == "competitive"            # mean 0.5, not below
    assert choose_mode([0.4, 0.9], rule="min") == "cooperative"
    assert choose_mode([0.4, 0.45], rule="max") == "cooperative"
    assert choose_mode([0.7, 0.8], threshold=0.8) == "cooperative"
    with pytest.raises(InvalidConfig):
        choose_mode([0.5], rule="median")


def test_difficulty_sweep_share_is_share_of_items_harder_than_agents():
    """Documented: Rasch, equal θ, threshold 0.5 → cooperative exactly when b > θ."""
    sweep = np.linspace(-3, 3, 601)
    for theta in (-1.0, 0.0, 0.5):
        modes = [choose_mode([sigmoid(theta - b)] * 2) for b in sweep]
        share = np.mean([m == "cooperative" for m in modes])
        assert share == pytest.approx(np.mean(sweep > theta + 1e-12), abs=1e-9)

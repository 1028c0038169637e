"""Item response theory for Dynamic Interaction: abilities of agents, difficulties of questions,
and the rule that picks a cooperative or competitive debate from them.

ILR says the mode is chosen from an IRT estimate of question difficulty and model ability, but
publishes neither the parameterisation nor the rule. Our choices (all configurable):

* **Model.** 2PL, P(correct | θ_agent, a_item, b_item) = σ(a·(θ − b)); `model="rasch"` fixes
  a = 1. Abilities are per agent seat (`agent_0`, …): a seat keeps its policy across episodes.
* **Fit.** Maximum a posteriori with Gaussian priors θ ~ N(θ0, σ_θ²), b ~ N(b0, σ_b²),
  log a ~ N(0, σ_a²), by block Newton (Fisher scoring) on the most recent `max_history` answers,
  warm-started, refitted online after every observation batch. `b0` is the question's
  difficulty tag, `(level − 3) · prior_scale`, or 0 when untagged; the prior anchors the scale,
  so abilities are on the same logit scale as the tagged difficulties.
* **Rule.** For each agent the predicted success p_i = σ(a(θ_i − b)); the team statistic is
  their mean (or min/max). The question is *cooperative* when that statistic is below
  `threshold` (default 0.5): the team is more likely wrong than right, so pooling ideas has the
  most to gain. Otherwise it is *competitive*: agents likely right are pushed to verify and to
  find flaws instead of agreeing lazily. With Rasch, equal abilities θ and threshold 0.5, a
  question is cooperative exactly when b > θ, so on a difficulty sweep the cooperative share is
  the share of questions harder than the agents.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np

from envgym.errors import InvalidConfig

__all__ = ["IRTModel", "choose_mode", "sigmoid", "MODES", "RULES"]

MODES = ("cooperative", "competitive")
RULES = ("mean", "min", "max")


def sigmoid(x: float | np.ndarray) -> float | np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def choose_mode(success_probs: Sequence[float], threshold: float = 0.5, rule: str = "mean") -> str:
    """`cooperative` when the team's predicted success (mean/min/max of the agents') is below
    `threshold`, else `competitive` (see the module docstring for why)."""
    if rule not in RULES:
        raise InvalidConfig(f"mode rule must be one of {RULES}, got `{rule}`.")
    stat = {"mean": np.mean, "min": np.min, "max": np.max}[rule](np.asarray(success_probs))
    return "cooperative" if stat < threshold else "competitive"


class IRTModel:
    """Online MAP 2PL/Rasch model over (agent, item, correct) observations."""

    def __init__(self, model: str = "2pl", ability_prior_std: float = 1.0,
                 difficulty_prior_std: float = 1.0, log_discrimination_prior_std: float = 0.5,
                 max_history: int = 5000, iterations: int = 30):
        if model not in ("2pl", "rasch"):
            raise InvalidConfig(f"irt model must be `2pl` or `rasch`, got `{model}`.")
        self.model = model
        self.sd_theta, self.sd_b, self.sd_loga = (ability_prior_std, difficulty_prior_std,
                                                 log_discrimination_prior_std)
        self.iterations = iterations
        self.history: deque[tuple[int, int, float]] = deque(maxlen=max_history)
        self.agents: dict[str, int] = {}
        self.items: dict[str, int] = {}
        self.theta0: list[float] = []
        self.b0: list[float] = []
        self.theta = np.zeros(0)
        self.b = np.zeros(0)
        self.loga = np.zeros(0)

    # ---- registration -----------------------------------------------------------------------

    def add_agent(self, agent: str, prior_mean: float = 0.0) -> int:
        if agent not in self.agents:
            self.agents[agent] = len(self.agents)
            self.theta0.append(prior_mean)
            self.theta = np.append(self.theta, prior_mean)
        return self.agents[agent]

    def add_item(self, item: str, prior_mean: float = 0.0) -> int:
        if item not in self.items:
            self.items[item] = len(self.items)
            self.b0.append(prior_mean)
            self.b = np.append(self.b, prior_mean)
            self.loga = np.append(self.loga, 0.0)
        return self.items[item]

    # ---- estimates --------------------------------------------------------------------------

    def ability(self, agent: str) -> float:
        return float(self.theta[self.agents[agent]]) if agent in self.agents else 0.0

    def difficulty(self, item: str, prior_mean: float = 0.0) -> float:
        return float(self.b[self.items[item]]) if item in self.items else prior_mean

    def discrimination(self, item: str) -> float:
        return float(np.exp(self.loga[self.items[item]])) if item in self.items else 1.0

    def p_correct(self, agent: str, item: str, prior_mean: float = 0.0) -> float:
        a, b = self.discrimination(item), self.difficulty(item, prior_mean)
        return float(sigmoid(a * (self.ability(agent) - b)))

    # ---- learning ---------------------------------------------------------------------------

    def observe(self, agent: str, item: str, correct: bool, prior_difficulty: float = 0.0,
                refit: bool = True) -> None:
        """Record one answer; refit unless batching several (`refit=False`, then `fit()`)."""
        j, i = self.add_agent(agent), self.add_item(item, prior_difficulty)
        self.history.append((j, i, float(correct)))
        if refit:
            self.fit()

    def fit(self, iterations: int | None = None) -> None:
        """Block Newton steps on the log posterior; each block's Hessian is diagonal."""
        if not self.history:
            return
        data = np.asarray(self.history)
        j, i, y = data[:, 0].astype(int), data[:, 1].astype(int), data[:, 2]
        theta0, b0 = np.asarray(self.theta0), np.asarray(self.b0)
        nj, ni = len(self.theta), len(self.b)
        for _ in range(iterations or self.iterations):
            a = np.exp(self.loga)[i]
            p = sigmoid(a * (self.theta[j] - self.b[i]))
            w = p * (1 - p)
            g = np.bincount(j, a * (y - p), nj) - (self.theta - theta0) / self.sd_theta**2
            h = np.bincount(j, a * a * w, nj) + 1 / self.sd_theta**2
            self.theta = self.theta + g / h
            p = sigmoid(a * (self.theta[j] - self.b[i]))
            w = p * (1 - p)
            g = np.bincount(i, -a * (y - p), ni) - (self.b - b0) / self.sd_b**2
            h = np.bincount(i, a * a * w, ni) + 1 / self.sd_b**2
            self.b = self.b + g / h
            if self.model == "2pl":
                self._step_discrimination(i, j, y, ni)

    def _step_discrimination(self, i: np.ndarray, j: np.ndarray, y: np.ndarray, ni: int) -> None:
        a = np.exp(self.loga)[i]
        x = self.theta[j] - self.b[i]
        p = sigmoid(a * x)
        g = np.bincount(i, (y - p) * a * x, ni) - self.loga / self.sd_loga**2
        h = np.bincount(i, p * (1 - p) * (a * x) ** 2, ni) + 1 / self.sd_loga**2
        self.loga = np.clip(self.loga + g / h, -2.0, 2.0)

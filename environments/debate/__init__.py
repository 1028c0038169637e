"""ILR-style multi-agent debate (`envgym/Debate-v0`): Dynamic Interaction + Idea3 on maths."""

from envgym.environments.debate.calibration import calibrated_reward, reward_stats
from envgym.environments.debate.env import PHASES, DebateEnv
from envgym.environments.debate.irt import IRTModel, choose_mode

__all__ = ["DebateEnv", "IRTModel", "PHASES", "calibrated_reward", "choose_mode", "reward_stats"]

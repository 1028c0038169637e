"""`envgym/SafetyRules-v0`: ASCL-style safety-rule lookup with a safety–utility frontier.

The model reads a request and decides whether to consult a rulebook (`lookup_rules`) before
answering with a decision (`comply` / `refuse` / `safe_complete`), cited rule ids and a
response. Rewards and metrics measure both under- and over-refusal and how often the model
looks rules up, so IFPO can rebalance consult and direct rollouts.
"""

from envgym.environments.safety.env import SafetyRulesEnv
from envgym.environments.safety.rulebook import Rule, load_rulebook
from envgym.environments.safety.tasks import SafetyTask, load_prompts

__all__ = ["Rule", "SafetyRulesEnv", "SafetyTask", "load_prompts", "load_rulebook"]

"""verl integration (`envgym[verl]`): envgym environments in verl's multi-turn rollout, and
envgym's credit estimators as verl advantage estimators.

* `agent_loop.EnvgymAgentLoop` (registered as verl agent loop `envgym`) runs any envgym
  environment for one dataset row through envgym's own rollout engine, with the model's
  tokens coming from verl's server manager: token-in token-out, observation tokens masked
  0 in the response mask, turn rewards, `state_key`s and spans passed on.
* `estimators.register()` registers `envgym_grpo`, `envgym_turn`, `envgym_gigpo`,
  `envgym_slate`, `envgym_ifpo` and `envgym_filter` in verl's advantage-estimator registry.
  They call the same functions the envgym learner calls (`envgym.agents.credit`).

Importing this package imports nothing from verl; the sub-modules do.
"""

"""envgym environments in TRL's `GRPOTrainer` (`pip install 'envgym[trl]'`).

TRL 1.16 offers two hooks; `environment_factory` drives tool-calling chat templates, while
envgym's actions are free text parsed by the environment, so this module plugs in through the
other one, `rollout_func`:

    from envgym.integrations.trl import EnvgymRollout, envgym_reward, make_dataset
    trainer = GRPOTrainer(model, reward_funcs=[envgym_reward], args=GRPOConfig(...),
                          train_dataset=make_dataset("envgym/TimeSeries-v0", range(256)),
                          rollout_func=EnvgymRollout("envgym/TimeSeries-v0"))

`EnvgymRollout` runs every prompt of TRL's batch as one multi-turn episode through envgym's
rollout engine, sampling with the trainer's own model (shared, not copied), and hands TRL:

* `prompt_ids` — the first observation's tokens; `completion_ids` — every later token of the
  episode, the sampled actions *and* the observations between them, exactly as the model saw
  them (the engine never re-tokenises);
* `logprobs` — the sampling log-probs of action tokens (0.0 on observation tokens);
* `env_mask` — 1 on action tokens, 0 on observation tokens: TRL multiplies it into the loss
  mask, so environment tokens are never trained;
* extra fields TRL forwards to reward functions: `env_reward` (the episode return, None for
  an episode that failed, which TRL leaves unscored rather than calling it zero),
  `turn_rewards` (the reward of every turn), `reward_components`, `env_success`, `env_error`.

Sampling uses envgym's transformers backend on the trainer's module (TRL's vLLM settings do not
apply), at the trainer's temperature / top-p / top-k, `max_completion_length` tokens per turn.

The dataset carries each task's env seed inside its prompt messages (`envgym_seed`), because
a `rollout_func` receives only the prompts; the environment is reset with that seed, so the
episode is the task the prompt shows (checked, so a stale dataset fails loudly).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from envgym.errors import InvalidConfig
from envgym.trajectory import Trajectory

__all__ = ["EnvgymRollout", "SEED_KEY", "envgym_reward", "make_dataset", "to_trl"]

SEED_KEY = "envgym_seed"


def _strip(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in m.items() if k != SEED_KEY} for m in messages]


def make_dataset(env_id: str, seeds: Iterable[int], env_kwargs: dict[str, Any] | None = None):
    """A `datasets.Dataset` of the environment's opening prompts, one row per task seed."""
    from envgym.policy import import_optional

    datasets = import_optional("datasets", "trl")
    import envgym

    env = envgym.make(env_id, **dict(env_kwargs or {}))
    rows: dict[str, list[Any]] = {"prompt": [], SEED_KEY: [], "task_id": []}
    try:
        for seed in seeds:
            obs, info = env.reset(seed=int(seed))
            if any(m.get("role") not in ("system", "user") for m in obs):
                raise InvalidConfig(f"{env_id}: the opening observation must be system/user "
                                    "messages to serve as a TRL prompt")
            rows["prompt"].append([{"role": m["role"], "content": m["content"], SEED_KEY: int(seed)}
                                   for m in obs])
            rows[SEED_KEY].append(int(seed))
            rows["task_id"].append(str(info.get("task_id")))
    finally:
        env.close()
    return datasets.Dataset.from_dict(rows)


def envgym_reward(completions: list[Any], env_reward: list[float | None] | None = None,
                  **_: Any) -> list[float | None]:
    """The reward function: each episode's return as the environment computed it."""
    if env_reward is None:
        raise InvalidConfig("envgym_reward needs the `env_reward` field: pass "
                            "rollout_func=EnvgymRollout(...) to GRPOTrainer")
    return list(env_reward)


class _Reseeded:
    """Task j of the engine's batch is the environment reset with the j-th row's seed."""

    def __init__(self, env: Any, seeds: list[int]):
        self._env, self._seeds = env, seeds

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        return self._env.reset(seed=self._seeds[int(seed or 0)], options=options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


class EnvgymRollout:
    """`rollout_func` for `trl.GRPOTrainer` over an envgym environment (module docstring).

    `max_tokens` is the per-turn limit (default: the trainer's `max_completion_length`);
    `max_turns` caps episodes (default: the environment's own limit).
    """

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None = None, *,
                 max_turns: int | None = None, max_tokens: int | None = None,
                 step_timeout: float = 300.0, check_prompts: bool = True):
        self.env_id, self.env_kwargs = env_id, dict(env_kwargs or {})
        if max_turns is not None:
            self.env_kwargs["max_turns"] = max_turns
        self.max_turns, self.max_tokens, self.step_timeout = max_turns, max_tokens, step_timeout
        self.check_prompts = check_prompts
        self.last: list[Trajectory] = []
        """The trajectories of the latest call (for inspection and tests)."""
        self._policy: Any = None

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        seeds = [_seed_of(p) for p in prompts]
        model = trainer.accelerator.unwrap_model(trainer.model)
        was_training = model.training
        try:
            trajs = self._collect(seeds, self._policy_for(model, trainer), trainer)
        finally:
            model.train(was_training)
        if self.check_prompts:
            for prompt, traj in zip(prompts, trajs):
                if traj.turns and _strip(prompt) != _strip(traj.turns[0].observation):
                    raise InvalidConfig(f"{self.env_id} seed {traj.seed}: the environment's "
                                        "opening observation differs from the dataset prompt; "
                                        "rebuild the dataset with make_dataset()")
        self.last = trajs
        return to_trl(trajs, self._policy, prompts)

    def _policy_for(self, model: Any, trainer: Any) -> Any:
        if self._policy is None or self._policy.model is not model:
            from envgym.agents.policies.hf import HFPolicy

            name = getattr(model.config, "_name_or_path", "") or "trl-model"
            self._policy = HFPolicy(name, model=model, tokenizer=trainer.processing_class,
                                    device=str(trainer.accelerator.device))
        return self._policy

    def _collect(self, seeds: list[int], policy: Any, trainer: Any) -> list[Trajectory]:
        import envgym
        from envgym.policy import SamplingParams
        from envgym.rollout import collect

        args = trainer.args
        sampling = SamplingParams(
            max_tokens=self.max_tokens or trainer.max_completion_length,
            temperature=trainer.temperature, top_p=trainer.top_p or 1.0,
            top_k=trainer.top_k or 0, seed=args.seed * 1_000_003 + trainer.state.global_step)

        def make() -> _Reseeded:
            return _Reseeded(envgym.make(self.env_id, **self.env_kwargs), seeds)

        make.__name__ = self.env_id
        trajs = collect(make, policy, episodes=len(seeds), seed=0, sampling=sampling,
                        step_timeout=self.step_timeout)
        for traj, seed in zip(trajs, seeds):
            traj.seed = seed
        return trajs


def _seed_of(prompt: Any) -> int:
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], dict):
        seed = prompt[0].get(SEED_KEY)
        if isinstance(seed, int):
            return seed
    raise InvalidConfig("each prompt must carry its env seed (`envgym_seed` in its messages); "
                        "build the dataset with envgym.integrations.trl.make_dataset()")


def to_trl(trajs: list[Trajectory], policy: Any,
           prompts: list[Any] | None = None) -> dict[str, list[Any]]:
    """Trajectories → the dict a `rollout_func` returns (see the module docstring)."""
    out: dict[str, list[Any]] = {k: [] for k in (
        "prompt_ids", "completion_ids", "logprobs", "env_mask", "env_reward", "turn_rewards",
        "reward_components", "env_success", "env_error")}
    eos = next(iter(policy.chat.eos_token_ids))
    for i, t in enumerate(trajs):
        ids, mask, logprobs = t.token_sequence()
        head = len(t.turns[0].obs_token_ids) if t.turns else 0
        prompt, completion, mask, logprobs = ids[:head], ids[head:], mask[head:], logprobs[head:]
        if not t.turns and prompts is not None:
            prompt = policy.chat.prompt_ids(_strip(prompts[i]))
        if not completion:  # failed before acting: one masked token keeps TRL's shapes valid
            completion, mask, logprobs = [eos], [0], [0.0]
        out["prompt_ids"].append(prompt or [eos])
        out["completion_ids"].append(completion)
        out["logprobs"].append(logprobs)
        out["env_mask"].append(mask)
        out["env_reward"].append(None if t.error else t.total_reward)
        out["turn_rewards"].append([turn.reward for turn in t.turns])
        out["reward_components"].append(_components(t))
        out["env_success"].append(t.success)
        out["env_error"].append(t.error)
    return out


def _components(t: Trajectory) -> dict[str, float]:
    total: dict[str, float] = {}
    for turn in t.turns:
        for name, value in turn.reward_components.items():
            total[name] = total.get(name, 0.0) + value
    return json.loads(json.dumps(total))

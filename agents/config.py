"""One TOML file describes a training run; pydantic validates it and names any bad field.

    envgym train agents/configs/timeseries_qwen05b.toml

Every section has defaults sized for the tiny CPU model, so a config only states what differs.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from envgym.agents.credit import validate_chain
from envgym.errors import InvalidConfig

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["GROUP_RELATIVE", "AgentConfig", "EnvConfig", "TrainConfig", "load_config"]

GROUP_RELATIVE = ("grpo", "turn", "gigpo")
"""Base estimators that normalise within a group of rollouts of one task (SLATE compares
siblings of a tree instead, ARTIST's `hierarchical` states its own rule)."""


class _Strict(BaseModel):
    # Attribute docstrings become field descriptions: `docs/config.md` is generated from them.
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class ModelConfig(_Strict):
    policy: str = "tiny"
    """`tiny` (build the offline tiny model into the run dir), `base` (the shipped pretrained
    base model), a local path or a Hub name."""
    tiny_hidden_size: int = Field(192, ge=8)
    """Hidden width of the `tiny` model."""
    tiny_layers: int = Field(4, ge=1)
    """Decoder layers of the `tiny` model."""
    tiny_heads: int = Field(6, ge=1)
    """Attention heads of the `tiny` model."""
    tiny_kv_heads: int = Field(2, ge=1)
    """Key/value heads of the `tiny` model; the `tiny_*` keys are ignored for other policies."""
    backend: Literal["hf", "vllm", "server"] = "hf"
    """Rollout backend: transformers in-process (shares the learner's weights), vLLM, or
    `server`: `envgym serve-policy` in a child process on 127.0.0.1 (weights pushed after
    each update through its `/v1/load_weights`; token ids and log-probs come back)."""
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    """Compute dtype. Parameters and optimizer state are always fp32 master weights; bf16/fp16
    run the forward and backward under autocast."""
    strategy: Literal["auto", "ddp", "fsdp"] = "auto"
    """Under `torchrun`: `ddp` replicates the model; `fsdp` shards parameters, gradients and
    optimizer state (FSDP2 `fully_shard`, one unit per decoder layer). `auto` = ddp."""
    logprob_chunk: int = Field(256, ge=1)
    """Loss positions projected to the vocabulary at a time (peak memory of the log-probs)."""
    device: str = "auto"
    """`auto`: CUDA when available, else CPU; or a torch device string (`cpu`, `cuda:1`)."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass: less memory, about a third more compute."""
    lora_rank: int = Field(0, ge=0)
    """0 trains all weights; > 0 trains LoRA adapters (needs peft) of this rank."""
    lora_alpha: int = Field(32, gt=0)
    """LoRA scaling numerator (the update is scaled by alpha / rank)."""
    lora_targets: str | list[str] = "all-linear"
    """Modules that get adapters: peft's `all-linear`, or a list of module names."""
    vllm_gpu_memory_utilization: float = Field(0.3, gt=0, le=1)
    """Share of GPU memory the vLLM engine may take (the learner needs the rest)."""
    warm_start: Literal["none", "sft"] = "none"
    """`sft`: train from `envgym sft` on this config (run once into output_dir/sft, then
    reused), so a tiny CPU run starts from a policy that emits well-formed turns."""

    @model_validator(mode="after")
    def _fsdp_without_lora(self) -> ModelConfig:
        if self.strategy == "fsdp" and self.lora_rank > 0:
            raise ValueError("strategy = 'fsdp' with LoRA: LoRA's few trainable weights need no "
                             "sharding; use strategy = 'ddp'")
        return self


class EnvConfig(_Strict):
    id: str
    """Registered environment id, e.g. `envgym/TimeSeries-v0` (`envgym list`); an unknown id
    fails when the config loads, naming the closest ids, before any model work."""
    weight: float = Field(1.0, gt=0)
    """Relative share of each step's tasks drawn from this environment."""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for `envgym.make` (the same as `--env-arg` on the command line); a
    key the environment does not take fails when the config loads, naming the keys it takes."""
    train_seeds: tuple[int, int] = (0, 1_000_000)
    """Tasks are drawn from seeds in [lo, hi); keep eval seeds outside this range."""
    eval_seeds: tuple[int, int] = (1_000_000, 1_000_064)
    """Held-out task seeds [lo, hi) for evaluation; must not overlap `train_seeds`. Where an
    environment cycles through a finite pool (`seed % N`), the tasks are compared by id too:
    no task these seeds reach under `kwargs | eval_kwargs` may be one `train_seeds` reach
    under `kwargs`, with or without `eval_kwargs`."""
    eval_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Overrides of `kwargs` for evaluation, e.g. `{ split = "test" }`: a held-out pool for
    environments that cycle through a finite task set (Search-v0: 200 of the 1,000 generated
    questions; CodeRefine-v0: 14 of the 42 built-in problems; Consult-v0, SafetyRules-v0)."""
    agents: dict[str, str] = Field(default_factory=dict)
    """Multi-agent environments: agents that play a fixed policy (`agent_1 = "scripted:noisy"`),
    `trainable=False` and no gradient. Every other agent plays the learner's policy."""

    @model_validator(mode="after")
    def _ranges(self) -> EnvConfig:
        for name in ("train_seeds", "eval_seeds"):
            lo, hi = getattr(self, name)
            if not lo < hi:
                raise ValueError(f"{name} must be [lo, hi) with lo < hi, got [{lo}, {hi})")
        (a, b), (c, d) = self.train_seeds, self.eval_seeds
        if a < d and c < b:
            raise ValueError("train_seeds and eval_seeds overlap: evaluation must use held-out tasks")
        self._known()
        self._held_out()
        return self

    def _known(self) -> None:
        """The id is registered and every kwarg is a constructor argument: checked when the
        config loads, before any model, SFT or run folder (`envgym.envargs`)."""
        from envgym.envargs import unknown_kwarg
        from envgym.errors import EnvGymError

        try:
            problem = unknown_kwarg(self.id, [*self.kwargs, *self.eval_kwargs])
        except EnvGymError as e:  # UnknownEnvironment names close matches and `envgym list`
            raise ValueError(str(e)) from None
        if problem is not None:
            raise ValueError(problem)

    def _held_out(self) -> None:
        """Evaluation tasks are compared by id with training tasks (`agents/heldout.py`),
        whether or not `eval_kwargs` swaps the pool; by seed mod the pool size where an
        environment gives only its size."""
        from envgym.agents.heldout import shared_task_ids
        from envgym.agents.structure import shared_tasks, task_pool_size
        both = shared_task_ids(self.id, self.kwargs, self.eval_kwargs, self.train_seeds,
                               self.eval_seeds)
        if both:
            raise ValueError(
                f"{self.id}: train_seeds {list(self.train_seeds)} and eval_seeds "
                f"{list(self.eval_seeds)} (eval_kwargs {self.eval_kwargs}) reach {len(both)} of "
                f"the same tasks (e.g. {both[:3]}): evaluate on held-out tasks, e.g. "
                'eval_kwargs = { split = "test" }, or seed ranges disjoint modulo the pool')
        pool = None if both is not None or self.eval_kwargs else task_pool_size(self.id, self.kwargs)
        if pool and (n := shared_tasks(self.train_seeds, self.eval_seeds, pool)):
            raise ValueError(f"{self.id} picks tasks by seed mod {pool}: train_seeds {list(self.train_seeds)} "
                             f"and eval_seeds {list(self.eval_seeds)} reach {n} of the same tasks; "
                             "choose ranges that are disjoint modulo the pool")


class AgentConfig(_Strict):
    """`[agents.ID]`: a trainable agent of the multi-agent environments with a learner of its
    own (ILR: each LLM trained by GRPO, calibrated against its partner's rewards)."""

    model: dict[str, Any] = Field(default_factory=dict)
    """Overrides of `[model]` for this agent's model (`{ tiny_hidden_size = 64 }`, `{ policy =
    "path" }`); unset keys take `[model]`'s values. A `tiny` model is built (and warm-started)
    in `output_dir/agents/ID/` with seed `seed` + the agent's position in `[agents]`, so two
    agents of one configuration start from different weights."""
    lr: float | None = Field(None, gt=0)
    """This agent's AdamW learning rate; None: `optim.lr` (the rest of `[optim]` is shared)."""


class RolloutConfig(_Strict):
    group_size: int = Field(8, ge=1)
    """Rollouts per task (G): the group that group-relative credit normalises over."""
    tasks_per_step: int = Field(8, ge=1)
    """Tasks per training step (each rolled out `group_size` times), across all ranks."""
    max_turns: int = Field(6, ge=1)
    """Turn limit per episode, passed to environments whose constructor takes it."""
    max_tokens: int = Field(96, ge=1)
    """Tokens per turn (per generated action)."""
    temperature: float = Field(1.0, gt=0)
    """Sampling temperature of training rollouts (also used for the log-probs)."""
    controller_temperature: float | None = Field(None, gt=0)
    """`hierarchical` (ARTIST: 1.0): the temperature of the controller's turns; None:
    `temperature`. Each turn records the temperature it was sampled at, and the learner's
    log-probs (old, new, reference) use that one."""
    reasoner_temperature: float | None = Field(None, gt=0)
    """`hierarchical` (ARTIST: 0.7): the temperature of the reasoner's answers (the N
    samples of each controller rollout); None: `temperature`."""
    top_p: float = Field(1.0, gt=0, le=1)
    """Nucleus sampling of training rollouts; 1 samples the whole distribution."""
    eval_temperature: float = Field(0.0, ge=0)
    """Sampling temperature of evaluation; 0 is greedy."""
    eval_episodes: int = Field(64, ge=1)
    """Held-out episodes per environment at each evaluation (capped by `eval_seeds`)."""
    branch_k: int = Field(0, ge=0)
    """SLATE (Algorithm 1, `envgym.tree`): k candidates per step from the shared prefix, one
    continued; `group_size` trees per question (SLATE uses k = 5, one tree). 0: off."""
    slate_budget: int = Field(4, ge=1)
    """SLATE's B: search steps before the answer is forced (the env gets B + 1 turns)."""
    slate_eta: float = 0.7
    """SLATE's η: the continued candidate is drawn from softmax(A / η); η <= 0 is argmax."""
    reasoner_samples: int = Field(6, ge=1)
    """`hierarchical` (ARTIST): reasoner samples N per controller rollout (forks of its
    answer turn); `group_size` is the number C of controller rollouts per question."""
    workers: int = Field(0, ge=0)
    """Run the environments in this many Ray actors (`envgym[ray]`); 0: in-process. The
    policy and its one batched `generate` per turn stay in the trainer."""
    deterministic: bool = False
    """Run episodes one at a time (slow; for debugging). Not needed for reproducibility: each
    row samples from its own stream, seeded by (run seed, episode, member, agent, turn), so
    the same seed gives the same rollouts at any concurrency and batch composition."""
    max_failed_fraction: float = Field(0.25, ge=0, lt=1)
    """Failed episodes (dead server, crashed sandbox, timeout) are dropped from their groups
    before credit; a step where a larger share of the rollouts failed is refused (training
    stops with the grouped reasons) rather than learning from what little survived."""
    kv_reuse: bool = True
    """HF backend: keep each episode's KV cache between turns (a turn prefills only its new
    tokens, a group's prompt once). Same ids and log-probs as false, which recomputes."""
    kv_cache_mb: float = Field(1024.0, gt=0)
    """HF backend: bound on the KV states kept *between* calls for reuse (least recently used
    evicted beyond it, then recomputed). Not counted: the batch being generated (its KV,
    one row per sample, and one row of last-position logits each), and the model."""
    max_staleness: int = Field(0, ge=0)
    """0: the synchronous loop (roll out, update, sync, repeat). N >= 1: a rollout thread
    samples the next steps while the learner updates (`agents/async_rollouts.py`); a step's
    batch holds no turn sampled more than N policy versions before the weights it trains,
    and the loss corrects with truncated importance weights (`is_cap`). With `[agents.ID]`
    each agent's policy has a version stream, bound and correction of its own; with
    `workers` the thread and the learner's evaluation share the Ray actors, each with its
    own run state; with backend vllm or server the engine is the thread's and the learner
    evaluates with HF on its own module. Refused with the reason: strategy fsdp."""
    weight_sync: Literal["step", "turn"] = "step"
    """max_staleness >= 1: `step` rolls step s out entirely with version s-1-N (every sample
    exactly N old; reproducible, kill-and-resume exact); `turn` loads the newest published
    version between turns, so an episode may span a sync (fresher samples, each turn
    tagged with its version; not reproducible run to run)."""
    stale: Literal["drop", "keep"] = "drop"
    """A trajectory with a turn older than max_staleness versions (a guard: the rollout
    thread is throttled so none should occur): `drop` it from the batch, or `keep` it in
    its group for the baseline with those turns out of the loss. Counted either way."""
    is_cap: float = Field(2.0, ge=1)
    """max_staleness >= 1: importance weights pi_old / pi_behaviour are truncated at this
    cap (truncated IS, as slime's `--tis-clip`)."""


class PPOConfig(_Strict):
    clip_low: float = Field(0.2, ge=0)
    """PPO clip: the ratio may fall to 1 - clip_low."""
    clip_high: float = Field(0.28, ge=0)
    """DAPO's clip-higher: the ratio may rise to 1 + clip_high but fall only to 1 - clip_low."""
    epochs: int = Field(1, ge=1)
    """Passes over each step's batch."""
    minibatches: int = Field(1, ge=1)
    """Optimizer steps per pass (the batch is split into this many parts)."""
    kl_coef: float = Field(0.0, ge=0)
    """Weight of the KL penalty to the reference model; 0 builds no reference."""
    kl_estimator: Literal["k1", "k3"] = "k3"
    """KL estimator: `k1` = log pi - log ref; `k3` = Schulman's unbiased, non-negative one."""
    entropy_coef: float = 0.0
    """Entropy bonus weight (subtracted from the loss)."""
    loss_agg: Literal["token_mean", "seq_mean", "auto"] = "auto"
    """`auto` uses the credit chain's hint (SLATE: seq_mean), else token_mean."""
    ratio: Literal["token", "sequence"] = "token"
    """`token` (default): PPO's per-token ratio and clip. `sequence`: SLATE's Eq. 7, one ratio
    per trajectory row, exp(mean log-ratio over its trained tokens), clipped once; a SLATE
    sibling trains one candidate turn, so that is one ratio per candidate."""
    loss: Literal["ppo_clip", "reinforce"] = "ppo_clip"
    """`reinforce`: ARTIST's -log pi * A, no ratio and no clipping (meant for one on-policy
    pass: epochs = minibatches = 1)."""
    role_sum: bool = False
    """ARTIST's loss: token-average the controller's and the reasoner's losses separately and
    sum them (L_ctrl + L_reas), so neither role's weight depends on its share of the tokens.
    Off: one token average over both roles."""
    kl_roles: list[Literal["controller", "reasoner"]] = Field(default_factory=list)
    """Apply the KL penalty only on turns of these roles (ARTIST: ["reasoner"]); empty: all."""
    max_tokens_per_microbatch: int = Field(16384, ge=0)
    """Padding-free update: each micro-batch packs whole sequences end to end up to this many
    tokens (a longer sequence runs alone); attention stays within each sequence, so the
    update equals the padded one. 0: padded rows, split only by `optim.grad_accum`."""


class OptimConfig(_Strict):
    lr: float = Field(1e-6, gt=0)
    """AdamW learning rate."""
    schedule: Literal["constant", "linear", "cosine"] = "constant"
    """Learning-rate decay over `steps` after the warm-up."""
    warmup_steps: int = Field(0, ge=0)
    """Steps of linear warm-up from 0."""
    weight_decay: float = Field(0.0, ge=0)
    """AdamW weight decay."""
    betas: tuple[float, float] = (0.9, 0.999)
    """AdamW betas."""
    max_grad_norm: float = Field(1.0, gt=0)
    """Gradient-norm clip per optimizer step."""
    grad_accum: int = Field(1, ge=1)
    """Micro-batches per minibatch: memory control, the update is unchanged."""


class SFTConfig(_Strict):
    data: list[str] = Field(default_factory=list)
    """Trajectory JSONL files; empty: generate from `scripted` on the first environment."""
    scripted: dict[str, float] = Field(default_factory=lambda: {"oracle": 1.0})
    """Scripted policies mixed per turn with these probabilities (noisy demonstrations)."""
    episodes: int = Field(256, ge=1)
    """Demonstrations generated when `data` is empty."""
    epochs: int = Field(2, ge=1)
    """Passes over the demonstrations."""
    batch_size: int = Field(16, ge=1)
    """Trajectories per SFT optimizer step."""
    lr: float = Field(1e-4, gt=0)
    """SFT learning rate."""
    only_successful: bool = False
    """Train only on demonstrations whose episode succeeded."""
    final_turn_weight: float = Field(1.0, gt=0)
    """Loss weight of each token of the action that ended an episode (the answer) in the
    token mean; above 1, the answer is learned rather than drowned by the tool turns."""


class LogConfig(_Strict):
    tensorboard: bool = True
    """Write TensorBoard event files to `output_dir/tb`."""
    wandb: bool = False
    """Log to Weights & Biases (needs `pip install wandb`; a clear error without it)."""
    wandb_project: str = "envgym"
    """The wandb project name."""
    progress: bool = True
    """Progress on stderr: a bar on a terminal, a line every few steps otherwise."""
    trajectories: bool = False
    """Write each step's trajectories with the advantages used (`envgym view RUN` shows them)."""


class TrainConfig(_Strict):
    seed: int = 0
    """Seeds the model init, task schedule, sampling and shuffles; a run repeats exactly."""
    output_dir: Path = Path("runs/envgym")
    """Where the run lives: metrics, checkpoints, trajectories, `final/`, `sft/`."""
    steps: int = Field(100, ge=1)
    """Training steps (each: rollouts, credit, one update)."""
    eval_every: int = Field(0, ge=0)
    """0: evaluate only before the first and after the last step."""
    checkpoint_every: int = Field(10, ge=0)
    """Save a checkpoint every N steps (and after the last); 0: only after the last."""
    keep_checkpoints: int = Field(2, ge=1)
    """Newest checkpoints kept; older ones are deleted."""
    model: ModelConfig = Field(default_factory=ModelConfig)
    envs: list[EnvConfig] = Field(min_length=1)
    """The environments of the task mixture, as `[[envs]]` tables (see below)."""
    rollout: RolloutConfig = Field(default_factory=RolloutConfig)
    credit: list[str] = Field(default_factory=lambda: ["grpo"])
    """The credit chain, left to right (see "Credit estimators" below)."""
    credit_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Options per estimator of the chain: `[credit_options.gigpo]` `omega = 0.5`."""
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    optim: OptimConfig = Field(default_factory=OptimConfig)
    sft: SFTConfig = Field(default_factory=SFTConfig)
    log: LogConfig = Field(default_factory=LogConfig)
    agents: dict[str, AgentConfig] = Field(default_factory=dict)
    """Multi-agent environments only: one `[agents.ID]` table per trainable agent gives that
    agent its own model, optimizer, scheduler, checkpoint and learning rate, all trained
    together from each step's rollout (each agent's turns sampled by its own policy, its
    update on its own trajectories). Every agent must then be listed here or play a fixed
    policy (`[[envs]] agents`). Empty (default): every trainable agent plays one shared
    policy, the `[model]`. Checkpoints hold every agent's states; the final models are saved
    in `output_dir/final/ID/`."""

    @field_validator("credit")
    @classmethod
    def _chain(cls, chain: list[str]) -> list[str]:
        validate_chain(chain)
        return chain

    @model_validator(mode="after")
    def _credit_options(self) -> TrainConfig:
        validate_chain(self.credit, self.credit_options)
        for env in self.envs:  # an environment may say which estimators its signals feed
            _check_credit_support(env.id, env.kwargs, self.credit)
        relative = [n for n in GROUP_RELATIVE if n in self.credit]
        if relative and self.rollout.group_size < 2:
            raise ValueError(f"credit {relative[0]!r} compares the rollouts of a group: with "
                             f"rollout.group_size = {self.rollout.group_size} every advantage is "
                             "0; set group_size >= 2")
        if "hierarchical" in self.credit and self.rollout.group_size < 2:
            raise ValueError("the `hierarchical` credit needs rollout.group_size >= 2 controller "
                             "rollouts per question (with 1 every controller advantage is 0)")
        if "hierarchical" in self.credit and self.rollout.reasoner_samples < 2:
            raise ValueError("the `hierarchical` credit needs rollout.reasoner_samples >= 2 "
                             "(ARTIST: 6): with 1 every reasoner advantage is 0")
        roles_t = (self.rollout.controller_temperature, self.rollout.reasoner_temperature)
        if roles_t != (None, None) and "hierarchical" not in self.credit:
            raise ValueError("rollout.controller_temperature / reasoner_temperature are per-role "
                             "temperatures: they need the `hierarchical` credit, whose rollouts "
                             "have those roles (else set rollout.temperature)")
        if self.ppo.role_sum and "hierarchical" not in self.credit:
            raise ValueError("ppo.role_sum sums the controller and reasoner losses: it needs "
                             "the `hierarchical` credit, whose turns carry those roles")
        if self.ppo.loss == "reinforce" and (self.ppo.epochs, self.ppo.minibatches) != (1, 1):
            raise ValueError("ppo.loss = 'reinforce' is on-policy: set ppo.epochs = 1 and "
                             "ppo.minibatches = 1")
        if "slate" in self.credit and self.rollout.branch_k < 2:
            raise ValueError("rollout.branch_k must be >= 2 for the `slate` credit (SLATE uses 5): "
                             "its advantages compare the k siblings of each step")
        if self.rollout.branch_k and "slate" not in self.credit:
            raise ValueError("rollout.branch_k runs SLATE's tree rollouts, whose siblings only "
                             "the `slate` credit reads: add it to the chain or set branch_k = 0")
        self._agents()
        unused = set(self.credit_options) - set(self.credit)
        if unused:
            raise ValueError(f"credit_options for {sorted(unused)}, which are not in the chain")
        return self

    @model_validator(mode="after")
    def _asynchronous(self) -> TrainConfig:
        """`rollout.max_staleness >= 1`: only what the rollout thread supports (issue 40)."""
        from envgym.agents.async_rollouts import refusals
        if self.rollout.max_staleness and (why := refusals(self)):
            raise ValueError("rollout.max_staleness >= 1 is not supported here: " + "; ".join(why))
        return self

    def _agents(self) -> None:
        """`[agents.ID]` tables: only where every seat is a multi-agent one, never a fixed
        partner as well, and with rollouts a per-agent policy can sample (flat episodes)."""
        if not self.agents:
            return
        from envgym.agents.structure import is_multi_agent
        single = [e.id for e in self.envs if not is_multi_agent(e.id)]
        if single:
            raise ValueError(f"[agents.ID] tables give agents of multi-agent environments their "
                             f"own policy; {single} are single-agent (drop [agents])")
        both = sorted({a for e in self.envs for a in e.agents} & set(self.agents))
        if both:
            raise ValueError(f"{both} are in [agents] (trainable) and in [[envs]] agents "
                             "(fixed partners): choose one")
        clash = [n for n in ("ig", "hierarchical", "slate") if n in self.credit]
        clash += [f"agents.{n}: {m.backend}/{m.strategy}" for n in self.agents
                  if (m := self.agent_model(n)).backend != "hf" or m.strategy == "fsdp"]
        if clash:
            raise ValueError("[agents.ID] (one policy per agent) supports the hf backend without "
                             f"FSDP and flat multi-agent episodes; not {clash}")

    def agent_model(self, name: str) -> ModelConfig:
        """`[model]` with `[agents.NAME] model` applied (validated as a `[model]` table)."""
        merged = {**self.model.model_dump(), **self.agents[name].model}
        try:
            return ModelConfig.model_validate(merged)
        except ValidationError as e:
            raise ValueError(f"agents.{name}.model: " + "; ".join(
                f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())) from None

    def digest(self) -> str:
        """A hash of the settings that must not change across a resume."""
        keep = self.model_dump(mode="json", exclude={"steps", "log", "eval_every",
                                                     "checkpoint_every", "keep_checkpoints"})
        return hashlib.sha1(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:12]


def _check_credit_support(env_id: str, kwargs: dict[str, Any], chain: list[str]) -> None:
    """Refuse estimators the environment's class says its signals cannot feed (its optional
    `credit_support(kwargs) -> {name: reason or None}`, e.g. imported environments)."""
    try:
        from envgym.runstate import env_class
        support = getattr(env_class(env_id), "credit_support", None)
    except Exception:  # noqa: BLE001 - an unknown id fails later, when it is made
        return
    table = support(dict(kwargs)) if callable(support) else {}
    if bad := [n for n in chain if table.get(n)]:
        ok = [n for n, why in table.items() if why is None]
        raise ValueError(f"{env_id} cannot train with credit {bad[0]!r}: {table[bad[0]]}; "
                         f"its signals support {ok}")


def load_config(source: str | Path | dict[str, Any], **overrides: Any) -> TrainConfig:
    """Parse and validate; errors become `InvalidConfig` naming each bad field."""
    if isinstance(source, dict):
        data = dict(source)
    else:
        path = Path(source)
        if not path.is_file():
            raise InvalidConfig(f"config file {path} does not exist")
        data = _read(path)
    data.update(overrides)
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as e:
        lines = [f"  {'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
                 f"{_suggestion(err)}" for err in e.errors()]
        raise InvalidConfig("invalid training config:\n" + "\n".join(lines)) from None


def _read(path: Path) -> dict[str, Any]:
    """TOML, or the JSON a run saves as its resolved config (`train_config.json`)."""
    try:
        if path.suffix == ".json":
            return json.loads(path.read_text())
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
        kind = "JSON" if path.suffix == ".json" else "TOML"
        raise InvalidConfig(f"{path}: not valid {kind}: {e}") from e
    except OSError as e:
        raise InvalidConfig(f"cannot read config {path}: {e.strerror}") from None


def _suggestion(err: Any) -> str:
    """For an unknown key, the closest key of its section (`lr_rate` -> `lr`)."""
    import difflib

    if err["type"] != "extra_forbidden" or not err["loc"]:
        return ""
    model: Any = TrainConfig
    for part in err["loc"][:-1]:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None:
            if isinstance(part, int):
                continue  # a list index: [[envs]] items are EnvConfig
            return ""
        model = _model_of(field.annotation)
        if model is None:
            return ""
    keys, bad = list(model.model_fields), str(err["loc"][-1])
    close = difflib.get_close_matches(bad, keys, n=1, cutoff=0.6) or sorted(
        (k for k in keys if bad.startswith(k) or k.startswith(bad)), key=len, reverse=True)[:1]
    return f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(keys)}"


def _model_of(annotation: Any) -> Any:
    """The pydantic model inside a field's type (`list[EnvConfig]` -> EnvConfig), or None."""
    from typing import get_args

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        if (found := _model_of(arg)) is not None:
            return found
    return None

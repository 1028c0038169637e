"""The learners of a run: one shared policy, or one per trainable agent (ILR's two LLMs).

ILR trains each LLM with GRPO on its own turns, with a reward that reads the other LLM's
reward distribution (methods.md §7). With `[agents.ID]` tables (`TrainConfig.agents`) every
listed agent gets a `Learner` of its own: model, reference, optimizer, scheduler, rollout
policy. They share everything else of the step: one rollout (`collect_multi` with one policy
per agent, so each agent's turns are sampled by its own weights), one credit computation (one
GRPO group per (task, agent), `calibrated` against the partner's live reward history), and the
minibatch shuffle generator, drawn by the learners in `[agents]` order. Each learner then
runs `ppo_update` on its own agent's slice of the batch, so an optimizer only ever steps its
own model.

Without `[agents]` the team is one learner (`name` None): the trainer's single-policy path,
with the same calls in the same order, and checkpoints in the same layout as before
(`model`/`optimizer`/`scheduler`). A multi-policy checkpoint holds `agents: {ID: {model,
optimizer, scheduler}}` beside the run's shared state, and the final models go to
`output_dir/final/ID/`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from envgym.agents.checkpoint import (
    load_model_state,
    load_optimizer_state,
    model_state,
    optimizer_state,
)
from envgym.agents.config import ModelConfig, TrainConfig
from envgym.agents.fsdp import parallelize
from envgym.agents.learner import (
    build_batch,
    dist_info,
    load_model,
    lr_lambda,
    make_reference,
    unwrap,
)
from envgym.agents.structure import role_token_mask, warm_start_policy
from envgym.agents.update import ppo_update

from envgym.errors import InvalidConfig

__all__ = ["Learner", "Team", "build_team"]


@dataclass
class Learner:
    """Everything one policy's training owns."""

    name: str | None  # the agent it plays; None: the shared policy of every trainable agent
    model: Any
    ref: Any
    optimizer: torch.optim.Optimizer
    scheduler: Any
    tokenizer: Any
    path: str
    model_cfg: ModelConfig
    policy: Any = None  # the rollout policy, attached once the states are restored


def build_learner(cfg: TrainConfig, name: str | None, model_cfg: ModelConfig, lr: float,
                  run_dir: Path, seed: int, model: Any = None, tokenizer: Any = None,
                  path: str | None = None) -> Learner:
    """Load (warm-starting when configured), wrap and give an optimizer to one policy."""
    own = cfg.model_copy(update={"model": model_cfg, "output_dir": run_dir, "seed": seed})
    if model is None:
        warm = warm_start_policy(own)  # model.warm_start = "sft": train from envgym sft
        model, tokenizer, path = load_model(
            model_cfg.model_copy(update={"policy": warm}) if warm else model_cfg, run_dir, seed)
    ref = make_reference(model, own)  # LoRA's base, or a frozen copy in compute dtype
    model, ref = parallelize(model, ref, model_cfg)  # DDP / FSDP2 under torchrun
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                  lr=lr, betas=cfg.optim.betas,
                                  weight_decay=cfg.optim.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(cfg.optim, cfg.steps))
    return Learner(name, model, ref, optimizer, scheduler, tokenizer, path, model_cfg)


def build_team(cfg: TrainConfig, out: Path, model: Any = None, tokenizer: Any = None,
               model_path: str | None = None) -> Team:
    """One learner for the `[model]`, or one per `[agents.ID]` (each in `out/agents/ID`,
    seeded `seed` + its position, so two agents of one configuration start apart)."""
    if not cfg.agents:
        return Team([build_learner(cfg, None, cfg.model, cfg.optim.lr, out, cfg.seed, model,
                                   tokenizer, model_path)])
    if model is not None:
        raise InvalidConfig("train(model=...) passes the one shared policy; a config with "
                            "[agents.ID] tables builds one model per agent")
    if dist_info()[1] > 1:
        raise InvalidConfig("[agents.ID] (one policy per agent) runs in one process; "
                            "launch it without torchrun")
    return Team([build_learner(cfg, name, cfg.agent_model(name),
                               cfg.agents[name].lr or cfg.optim.lr, out / "agents" / name,
                               cfg.seed + k) for k, name in enumerate(cfg.agents)])


class Team:
    """The run's learners, driven by the trainer as one: restore, roll out, update, save."""

    def __init__(self, learners: list[Learner]):
        self.learners = learners
        self.single = len(learners) == 1 and learners[0].name is None

    # ---- what the rollout and credit read ----

    @property
    def policy(self) -> Any:
        """The rollout policy; with one learner per agent `{agent: policy}` (`collect_multi`
        gives each agent's turns to its own)."""
        if self.single:
            return self.learners[0].policy
        return {lr.name: lr.policy for lr in self.learners}

    @property
    def tokenizer(self) -> Any:
        return self.learners[0].tokenizer

    def attach_policies(self, make: Callable[[Any, Any, str], Any]) -> None:
        """`make(model, tokenizer, path)` -> the rollout policy of each learner."""
        for lr in self.learners:
            lr.policy = make(lr.model, lr.tokenizer, lr.path)

    # ---- step 5-6: update and sync ----

    def update(self, credit: Any, cfg: TrainConfig, how: str, shuffle: torch.Generator,
               after: Callable[[Learner], None] | None = None) -> dict[str, float]:
        """`ppo_update` for each learner on its own agent's trajectories of `credit`; every
        scheduler steps, even one whose agent had no trajectory this step (all failed).
        `after(learner)` runs as each learner's update ends (asynchronous training publishes
        that agent's new version there, while the next learner trains)."""
        done = after or (lambda lr: None)
        if self.single:
            one = _update(self.learners[0], credit, cfg, how, shuffle)
            done(self.learners[0])
            return one
        stats: dict[str, list[float]] = {}
        out: dict[str, float] = {}
        for lr in self.learners:
            keep = [i for i, t in enumerate(credit.trajectories) if t.agent_id == lr.name]
            out[f"agent/{lr.name}/trajectories"] = float(len(keep))
            if not keep:
                lr.scheduler.step()
                done(lr)
                continue
            for k, v in _update(lr, credit.subset(keep), cfg, how, shuffle).items():
                out[f"agent/{lr.name}/{k}"] = v
                stats.setdefault(k, []).append(v)
            done(lr)
        out.update({k: float(np.mean(v)) for k, v in stats.items()})  # the learners' mean
        return out

    def sync(self, cfg: TrainConfig) -> None:
        from envgym.agents.trainer import sync_weights

        for lr in self.learners:
            sync_weights(lr.policy, lr.model, cfg)

    def lr_metrics(self) -> dict[str, float]:
        if self.single:
            return {"lr": self.learners[0].scheduler.get_last_lr()[0]}
        return {f"agent/{lr.name}/lr": lr.scheduler.get_last_lr()[0] for lr in self.learners}

    # ---- checkpoints and the final models ----

    def state_dict(self) -> dict[str, Any]:
        """The learners' part of a checkpoint (FSDP: collectives, call on every rank)."""
        def one(lr: Learner) -> dict[str, Any]:
            return {"model": model_state(lr.model),
                    "optimizer": optimizer_state(lr.model, lr.optimizer),
                    "scheduler": lr.scheduler.state_dict()}
        if self.single:
            return one(self.learners[0])
        return {"agents": {lr.name: one(lr) for lr in self.learners}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.single:
            parts = {None: state}
        else:
            parts = state.get("agents") or {}
            missing = [lr.name for lr in self.learners if lr.name not in parts]
            if missing:
                raise InvalidConfig(f"the checkpoint holds no learner for agents {missing}")
        for lr in self.learners:
            part = parts[lr.name]
            load_model_state(lr.model, part["model"])
            load_optimizer_state(lr.model, lr.optimizer, part["optimizer"])
            lr.scheduler.load_state_dict(part["scheduler"])

    def save_final(self, out: Path, rank: int) -> None:
        """`out/final` (one learner) or `out/final/ID` per agent, as Hugging Face models."""
        for lr in self.learners:
            final = model_state(lr.model)  # FSDP: gathered from every rank
            if rank == 0:
                where = out / "final" if self.single else out / "final" / str(lr.name)
                unwrap(lr.model).save_pretrained(where, state_dict=final)
                lr.tokenizer.save_pretrained(where)

    def result(self) -> dict[str, Any]:
        """What `train()` returns besides the evaluations."""
        if self.single:
            lr = self.learners[0]
            return {"model": unwrap(lr.model), "tokenizer": lr.tokenizer, "policy": lr.policy}
        return {"models": {lr.name: unwrap(lr.model) for lr in self.learners},
                "tokenizer": self.tokenizer, "policy": self.policy}


def _update(lr: Learner, credit: Any, cfg: TrainConfig, how: str, shuffle: torch.Generator
            ) -> dict[str, float]:
    """One learner's step 5: its batch, masks, PPO update and scheduler step."""
    lr.model.train()
    trajs = credit.trajectories
    batch = build_batch(trajs, credit.advantages or [], credit.turn_mask,
                        pad_id=lr.tokenizer.pad_token_id or 0)
    kl_mask = build_batch(trajs, role_token_mask(trajs, cfg.ppo.kl_roles),
                          credit.turn_mask).advantages if cfg.ppo.kl_roles else None
    role_mask = build_batch(trajs, role_token_mask(trajs, ["reasoner"]),
                            credit.turn_mask).advantages if cfg.ppo.role_sum else None
    stats = ppo_update(lr.model, lr.ref, lr.optimizer, batch, cfg, how, shuffle, kl_mask,
                       role_mask)
    lr.scheduler.step()
    return stats

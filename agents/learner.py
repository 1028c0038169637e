"""The pieces the trainer and SFT share: model loading, token batches, log-probs, the schedule.

Kept apart from `trainer.py` so that the training loop itself reads top to bottom.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from envgym.agents.config import ModelConfig, OptimConfig
from envgym.errors import DependencyNotInstalled, InvalidConfig
from envgym.trajectory import Trajectory

__all__ = ["TokenBatch", "attach_ig", "build_batch", "dist_info", "load_model", "lr_lambda",
           "token_logprobs", "unwrap"]


# ---- model ----------------------------------------------------------------------------------

def load_model(cfg: ModelConfig, run_dir: Path, seed: int = 0) -> tuple[Any, Any, str]:
    """(model, tokenizer, path) for `cfg.policy`; `tiny` builds the offline tiny model once."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = cfg.policy
    if path == "tiny":
        path = str(run_dir / "tiny-model")
        if not (Path(path) / "config.json").is_file():
            from envgym.agents.tiny import build_tiny_model
            build_tiny_model(path, seed=seed, hidden_size=cfg.tiny_hidden_size,
                             layers=cfg.tiny_layers)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, cfg.dtype))
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.config.use_cache = False
    if cfg.lora_rank > 0:
        try:
            from peft import LoraConfig, get_peft_model
        except ImportError as e:
            raise DependencyNotInstalled("model.lora_rank > 0 needs peft: "
                                         "pip install 'envgym[lora]'") from e
        model = get_peft_model(model, LoraConfig(r=cfg.lora_rank, lora_alpha=cfg.lora_alpha,
                                                 target_modules=cfg.lora_targets,
                                                 task_type="CAUSAL_LM"))
    device = cfg.device if cfg.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InvalidConfig(f"model.device is {device!r} but no CUDA device is visible")
    if device == "cuda" and "LOCAL_RANK" in os.environ:
        device = f"cuda:{os.environ['LOCAL_RANK']}"
    return model.to(device), tokenizer, path


def unwrap(model: Any) -> Any:
    """The module inside DDP/FSDP wrappers."""
    return getattr(model, "module", model)


def dist_info() -> tuple[int, int]:
    """(rank, world size); (0, 1) outside `torchrun`."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


def lr_lambda(cfg: OptimConfig, total_steps: int):
    """Linear warm-up, then constant, linear or cosine decay to 0 at `total_steps`."""
    def factor(step: int) -> float:
        if step < cfg.warmup_steps:
            return (step + 1) / cfg.warmup_steps
        if cfg.schedule == "constant":
            return 1.0
        progress = min(1.0, (step - cfg.warmup_steps) / max(1, total_steps - cfg.warmup_steps))
        return 1.0 - progress if cfg.schedule == "linear" else 0.5 * (1 + math.cos(math.pi * progress))
    return factor


# ---- batches --------------------------------------------------------------------------------

@dataclass
class TokenBatch:
    """Right-padded training sequences: observation and action tokens of whole trajectories.

    `loss_mask` is 1 exactly on trained action tokens; `advantages` and `sample_logprobs`
    (the rollout backend's) are aligned with `input_ids` and 0 elsewhere.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    loss_mask: torch.Tensor
    advantages: torch.Tensor
    sample_logprobs: torch.Tensor

    def __len__(self) -> int:
        return self.input_ids.shape[0]

    def select(self, rows: torch.Tensor | list[int]) -> TokenBatch:
        return TokenBatch(*(getattr(self, f)[rows] for f in self.__dataclass_fields__))

    def to(self, device: Any) -> TokenBatch:
        return TokenBatch(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))


def build_batch(trajs: list[Trajectory], advantages: list[list[np.ndarray]] | None = None,
                turn_mask: list[list[bool]] | None = None, pad_id: int = 0,
                max_len: int | None = None) -> TokenBatch:
    """Concatenate `obs_token_ids + action_token_ids` over turns; trajectories without token
    ids (scripted, chat APIs) cannot be trained and raise."""
    rows = []
    for i, traj in enumerate(trajs):
        ids, mask, adv, lps = [], [], [], []
        for t, turn in enumerate(traj.turns):
            n = len(turn.action_token_ids)
            if turn.action and not n:
                raise InvalidConfig(f"trajectory {traj.task_id} has no token ids: train on "
                                    "trajectories from a token policy (hf:, vllm:)")
            on = turn_mask[i][t] if turn_mask is not None else True
            a = advantages[i][t] if advantages is not None else np.zeros(n)
            ids += turn.obs_token_ids + turn.action_token_ids
            mask += [0] * len(turn.obs_token_ids) + [int(on)] * n
            adv += [0.0] * len(turn.obs_token_ids) + list(map(float, a))
            lps += [0.0] * len(turn.obs_token_ids) + (list(turn.action_logprobs) or [0.0] * n)
        rows.append((ids, mask, adv, lps))
    width = max([1] + [len(r[0]) for r in rows])
    if max_len is not None:
        width = min(width, max_len)
    out = [torch.zeros(len(rows), width, dtype=d) for d in
           (torch.long, torch.long, torch.float32, torch.float32, torch.float32)]
    out[0].fill_(pad_id)
    for i, (ids, mask, adv, lps) in enumerate(rows):
        n = min(len(ids), width)
        out[0][i, :n] = torch.tensor(ids[:n])
        out[1][i, :n] = 1
        out[2][i, :n] = torch.tensor(mask[:n], dtype=torch.float32)
        out[3][i, :n] = torch.tensor(adv[:n])
        out[4][i, :n] = torch.tensor(lps[:n])
    return TokenBatch(*out)


def token_logprobs(model: Any, batch: TokenBatch, temperature: float = 1.0,
                   with_entropy: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """log p(ids[t] | ids[:t]) per position (0 at t = 0), and optionally the entropy there."""
    positions = (batch.attention_mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                   position_ids=positions, use_cache=False).logits[:, :-1].float() / temperature
    logp_all = logits.log_softmax(-1)
    picked = logp_all.gather(-1, batch.input_ids[:, 1:, None]).squeeze(-1)
    entropy = None
    if with_entropy:
        entropy = F.pad(-(logp_all.exp() * logp_all).sum(-1), (1, 0))
    return F.pad(picked, (1, 0)), entropy


# ---- batch-level rewards ----------------------------------------------------------------------

def attach_ig(trajs: list[Trajectory], scorer: Any, seed: int = 0) -> int:
    """Step 3, batch-level rewards: fill the value of every `query` span that the environment
    left empty with IG-Search's information gain, scored by the policy (the batch-wide
    counterfactual pool is why this cannot happen inside `step()`). Returns spans filled."""
    todo = [t for t in trajs if t.outcome.get("golden_answers") and any(
        s.kind == "query" and s.value is None for turn in t.turns for s in turn.spans)]
    if not todo:
        return 0
    from envgym.environments.search.ig import IGRollout, information_gain

    def text(messages: list[dict[str, Any]]) -> str:
        return "".join(m.get("content", "") for m in messages)

    rollouts = [IGRollout.from_steps(text(t.turns[0].observation), [x.action for x in t.turns],
                                     [text(x.observation) for x in t.turns[1:]],
                                     t.outcome["golden_answers"]) for t in todo]
    filled = 0
    for traj, result in zip(todo, information_gain(rollouts, scorer, seed=seed)):
        for row in result["steps"]:
            spans = [s for s in traj.turns[row["turn"]].spans if s.kind == "query" and s.value is None]
            if row["ig"] is not None and spans:
                spans[0].value = float(row["ig"])
                filled += 1
    return filled

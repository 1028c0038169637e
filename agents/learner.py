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

__all__ = ["LogprobModel", "TokenBatch", "attach_ig", "build_batch", "chunked_logprobs",
           "compute_dtype", "dist_info", "load_model", "lr_lambda", "make_reference",
           "naive_token_logprobs", "token_logprobs", "unwrap"]


# ---- model ----------------------------------------------------------------------------------

def load_model(cfg: ModelConfig, run_dir: Path, seed: int = 0) -> tuple[Any, Any, str]:
    """(model, tokenizer, path) for `cfg.policy`; `tiny` builds the offline tiny model once,
    `base` is the pretrained base model shipped in the package."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = cfg.policy
    if path == "base":  # the pretrained base shipped with envgym (agents/base_model.py)
        from envgym.agents.base_model import shipped_base_model
        path = str(shipped_base_model())
    if path == "tiny":
        path = str(run_dir / "tiny-model")
        if not (Path(path) / "config.json").is_file():
            from envgym.agents.tiny import build_tiny_model
            build_tiny_model(path, seed=seed, hidden_size=cfg.tiny_hidden_size,
                             layers=cfg.tiny_layers, heads=cfg.tiny_heads,
                             kv_heads=cfg.tiny_kv_heads)
    tokenizer = AutoTokenizer.from_pretrained(path)
    # Parameters stay fp32 (master weights, AdamW state); `dtype` is the compute dtype that
    # `LogprobModel` autocasts to. Loading them in bf16 would freeze small updates: at lr 1e-6
    # most `w + lr * u` round back to `w` in bf16's 8-bit mantissa.
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
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
    """The causal LM inside DDP and `LogprobModel` wrappers (FSDP2 wraps in place)."""
    while isinstance(getattr(model, "module", None), torch.nn.Module):
        model = model.module
    return model


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

    `loss_mask` is nonzero exactly on trained action tokens (1, or an SFT loss weight:
    `sft.weight_final_turns`); `advantages` and `sample_logprobs`
    (the rollout backend's) are aligned with `input_ids` and 0 elsewhere. `temperatures`,
    where given, is the temperature each action token was sampled at (`Turn.temperature`;
    ARTIST samples its two roles at two), 0 where unknown: the log-probs of a token are
    computed at its own temperature, so they are of the distribution that sampled it.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    loss_mask: torch.Tensor
    advantages: torch.Tensor
    sample_logprobs: torch.Tensor
    temperatures: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.input_ids.shape[0]

    def select(self, rows: torch.Tensor | list[int]) -> TokenBatch:
        return TokenBatch(*(_rows(getattr(self, f), rows) for f in self.__dataclass_fields__))

    def to(self, device: Any) -> TokenBatch:
        return TokenBatch(*(None if (v := getattr(self, f)) is None else v.to(device)
                            for f in self.__dataclass_fields__))

    def token_temperatures(self, default: float) -> torch.Tensor | float:
        """Per-token temperatures with `default` where none was recorded; `default` itself
        when no token recorded one (the plain scalar path)."""
        if self.temperatures is None or not bool((self.temperatures > 0).any()):
            return default
        return torch.where(self.temperatures > 0, self.temperatures,
                           torch.full_like(self.temperatures, float(default or 1.0)))


def _rows(value: torch.Tensor | None, rows: torch.Tensor | list[int]) -> torch.Tensor | None:
    return None if value is None else value[rows]


def build_batch(trajs: list[Trajectory], advantages: list[list[np.ndarray]] | None = None,
                turn_mask: list[list[bool]] | None = None, pad_id: int = 0,
                max_len: int | None = None) -> TokenBatch:
    """Concatenate `obs_token_ids + action_token_ids` over turns; trajectories without token
    ids (scripted, chat APIs) cannot be trained and raise."""
    rows = []
    for i, traj in enumerate(trajs):
        ids, mask, adv, lps, temps = [], [], [], [], []
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
            temps += [0.0] * len(turn.obs_token_ids) + [_logprob_temperature(turn)] * n
        rows.append((ids, mask, adv, lps, temps))
    width = max([1] + [len(r[0]) for r in rows])
    if max_len is not None:
        width = min(width, max_len)
    out = [torch.zeros(len(rows), width, dtype=d) for d in
           (torch.long, torch.long, torch.float32, torch.float32, torch.float32, torch.float32)]
    out[0].fill_(pad_id)
    for i, (ids, mask, adv, lps, temps) in enumerate(rows):
        n = min(len(ids), width)
        out[0][i, :n] = torch.tensor(ids[:n])
        out[1][i, :n] = 1
        out[2][i, :n] = torch.tensor(mask[:n], dtype=torch.float32)
        out[3][i, :n] = torch.tensor(adv[:n])
        out[4][i, :n] = torch.tensor(lps[:n])
        out[5][i, :n] = torch.tensor(temps[:n])
    return TokenBatch(*out)


def _logprob_temperature(turn: Any) -> float:
    """The temperature of a turn's sampling log-probs: its recorded one (greedy reports
    log-probs at 1), 0 when it recorded none (the learner then uses its default)."""
    if turn.temperature is None:
        return 0.0
    return float(turn.temperature) if turn.temperature > 0 else 1.0


def token_logprobs(model: Any, batch: TokenBatch, temperature: float = 1.0,
                   with_entropy: bool = False, at_loss_only: bool = True, packed: bool = False
                   ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """log p(ids[t] | ids[:t]) per position (0 at t = 0 and wherever nothing is computed), and
    optionally the entropy there. `at_loss_only` projects to the vocabulary only where
    `loss_mask` is 1 (every other position is 0); else at every real token. Tokens whose
    sampling temperature the batch records (`batch.temperatures`) are scored at it, the
    rest at `temperature`. `packed`: the model runs on the rows' real tokens laid end to end
    (`agents/packing.py`), not on the padded batch; the result has the same `[B, T]` layout.

    `model` is a `LogprobModel` (possibly inside DDP/FSDP, so their hooks run) or a plain
    causal LM, which is wrapped on the fly (fp32, no autocast)."""
    if not isinstance(model, LogprobModel) and not isinstance(unwrap_once(model), LogprobModel):
        model = LogprobModel(model)
    where = batch.loss_mask if at_loss_only else batch.attention_mask
    return model(batch.input_ids, batch.attention_mask, where,
                 batch.token_temperatures(temperature), with_entropy, packed=packed)


def unwrap_once(model: Any) -> Any:
    return getattr(model, "module", model)


class LogprobModel(torch.nn.Module):
    """A causal LM that returns per-token log-probs instead of logits: the unit the learner
    wraps in DDP or FSDP, so their hooks see every forward.

    Memory: the vocabulary projection runs only at the requested positions, in chunks of
    `chunk` rows, and under autograd each chunk is recomputed in backward (checkpointed), so
    only one `[chunk, vocab]` fp32 block (and its few temporaries: 256 x 152k x 4 B = 0.16 GB
    each) is alive instead of `[batch, seq, vocab]` (when all the rows' logits would take
    less than `CHECKPOINT_LOGITS_BYTES`, a small vocabulary, they are kept instead).
    Mixed precision: with `compute_dtype` (bf16/fp16) the forward runs under
    `torch.autocast` while the parameters (and so AdamW's state) stay fp32 master weights;
    tiny updates (lr 1e-6) survive, which they do not in bf16 parameters.
    `disable_adapter`: run a peft model with its LoRA adapters off (the reference policy
    without a second copy of the weights).
    """

    def __init__(self, model: Any, compute_dtype: torch.dtype | None = None,
                 disable_adapter: bool = False, chunk: int = 256):
        super().__init__()
        self.module = model
        self.compute_dtype, self.disable_adapter, self.chunk = compute_dtype, disable_adapter, chunk

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                where: torch.Tensor, temperature: float | torch.Tensor = 1.0,
                with_entropy: bool = False, packed: bool = False
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """`temperature`: one for every token, or per position `[B, T]` (that of the token
        at each position). `packed`: run on the real tokens only (see `token_logprobs`)."""
        import contextlib

        adapters = self.module.disable_adapter() if self.disable_adapter else contextlib.nullcontext()
        autocast = (torch.autocast(input_ids.device.type, dtype=self.compute_dtype)
                    if self.compute_dtype is not None else contextlib.nullcontext())
        with adapters, autocast:
            return self._forward(input_ids, attention_mask, where, temperature, with_entropy,
                                 packed)

    def _forward(self, input_ids, attention_mask, where, temperature, with_entropy, packed):
        select = (where[:, 1:] > 0) & (attention_mask[:, 1:] > 0)  # t >= 1 whose token is scored
        split = decoder_and_head(self.module)
        body, head = (self.module, None) if split is None else split
        if packed:
            hidden = self._packed_hidden(body, input_ids, attention_mask, select, split is None)
        else:
            positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
            out = body(input_ids=input_ids, attention_mask=attention_mask,
                       position_ids=positions, use_cache=False)
            # no separable head (soft-capping...): the model's own logits are the rows
            hidden = (out.logits if split is None else out.last_hidden_state)[:, :-1][select]
        if isinstance(temperature, torch.Tensor):  # the predicted token's own temperature
            temperature = temperature.to(hidden.device)[:, 1:][select]
        lp, ent = chunked_logprobs(hidden, input_ids[:, 1:][select], head, temperature,
                                   with_entropy, self.chunk)
        return _scatter(lp, select), (_scatter(ent, select) if with_entropy else None)


    def _packed_hidden(self, body: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                       select: torch.Tensor, logits: bool) -> torch.Tensor:
        """The rows (hidden states, or logits) that predict the `select`ed tokens, from one
        padding-free forward over the batch's sequences packed end to end."""
        from envgym.agents.packing import (PACKED_ATTENTION, pack_rows, packed_forward_kwargs,
                                           use_packed_attention)

        impl = use_packed_attention(unwrap(self.module))
        packed = pack_rows(input_ids, attention_mask, share_prefixes=impl == PACKED_ATTENTION)
        out = body(**packed_forward_kwargs(packed, impl))
        rows = (out.logits if logits else out.last_hidden_state)[0]
        # token t of a row is predicted at its own position t - 1, one place before it
        return rows[packed.index[:, :-1][select]]


def _scatter(values: torch.Tensor, select: torch.Tensor) -> torch.Tensor:
    """`values` at the True cells of `select` [B, T-1], 0 elsewhere, shifted to [B, T]."""
    out = torch.zeros(select.shape, dtype=torch.float32, device=select.device)
    out = out.masked_scatter(select, values.float())
    return F.pad(out, (1, 0))


CHECKPOINT_LOGITS_BYTES = 64 * 2**20
"""`chunked_logprobs` checkpoints its chunks when the batch's fp32 logits would exceed this:
at Qwen's 151,936-token vocabulary from 111 rows on, on a 636-token tiny model never."""


def chunked_logprobs(hidden: torch.Tensor, targets: torch.Tensor, head: Any,
                     temperature: float | torch.Tensor, with_entropy: bool, chunk: int
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """log softmax(head(h) / T)[target] (and the entropy) for `[N, H]` rows, `chunk` rows at a
    time, checkpointed under autograd; `head=None` means the rows are logits already. `T` is
    one number or one per row (`[N]`). Checkpointing trades a second head projection in
    backward for memory, so it is used only where all N rows' fp32 logits would exceed
    `CHECKPOINT_LOGITS_BYTES` (a large vocabulary); below, the chunks keep their logits for
    backward (the same values either way: the recompute repeats the same operations)."""
    def block(h: torch.Tensor, tgt: torch.Tensor, t: Any) -> tuple[torch.Tensor, torch.Tensor]:
        scale = t[:, None].float() if isinstance(t, torch.Tensor) else (t or 1.0)
        logits = (head(h) if head is not None else h).float() / scale
        logz = logits.logsumexp(-1)
        picked = logits.gather(-1, tgt[:, None]).squeeze(-1) - logz
        if not with_entropy:
            return picked, picked.new_zeros(picked.shape)
        probs = (logits - logz[:, None]).exp()
        return picked, logz - (probs * logits).sum(-1)

    from torch.utils.checkpoint import checkpoint

    vocab = hidden.shape[-1] if head is None else getattr(head, "out_features", None)
    recompute = vocab is None or hidden.shape[0] * vocab * 4 > CHECKPOINT_LOGITS_BYTES
    parts_lp, parts_ent = [], []
    for start in range(0, max(1, hidden.shape[0]), chunk):  # one (maybe empty) block at least
        h, tgt = hidden[start:start + chunk], targets[start:start + chunk]
        t = temperature[start:start + chunk] if isinstance(temperature, torch.Tensor) \
            else temperature
        if recompute and torch.is_grad_enabled() and h.requires_grad:
            lp, ent = checkpoint(block, h, tgt, t, use_reentrant=False)
        else:
            lp, ent = block(h, tgt, t)
        parts_lp.append(lp)
        parts_ent.append(ent)
    return torch.cat(parts_lp), torch.cat(parts_ent)


def decoder_and_head(model: Any) -> tuple[Any, Any] | None:
    """(backbone, vocabulary projection) when the logits are exactly `head(backbone(x))`;
    None for models that transform logits (soft-capping, logit scale)."""
    config = getattr(model, "config", None)
    if config is None or getattr(config, "final_logit_softcapping", None) or \
            getattr(config, "logit_scale", None) not in (None, 1.0):
        return None
    try:
        decoder, head = model.get_decoder(), model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None
    return (decoder, head) if decoder is not None and head is not None else None


def naive_token_logprobs(model: Any, batch: TokenBatch, temperature: float = 1.0
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference computation (full-vocabulary fp32 logits at every position), kept to
    test `token_logprobs` against and to measure what the chunking saves."""
    positions = (batch.attention_mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                   position_ids=positions, use_cache=False).logits[:, :-1].float() / temperature
    logp_all = logits.log_softmax(-1)
    picked = logp_all.gather(-1, batch.input_ids[:, 1:, None]).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    return F.pad(picked, (1, 0)), F.pad(entropy, (1, 0))


def make_reference(model: Any, cfg: Any) -> LogprobModel | None:
    """The KL reference policy, only when `ppo.kl_coef > 0`: with LoRA, the same module with
    its adapters disabled (no copy); otherwise a frozen copy in the compute dtype (bf16 under
    mixed precision: half the bytes of the fp32 master weights)."""
    if cfg.ppo.kl_coef <= 0:
        return None
    import copy

    base = unwrap(model)
    dtype = compute_dtype(cfg.model)
    if hasattr(base, "disable_adapter"):
        return LogprobModel(base, dtype, disable_adapter=True, chunk=cfg.model.logprob_chunk)
    frozen = copy.deepcopy(base).eval().requires_grad_(False)
    if dtype is not None:
        frozen = frozen.to(dtype)
    return LogprobModel(frozen, dtype, chunk=cfg.model.logprob_chunk)


def compute_dtype(cfg: ModelConfig) -> torch.dtype | None:
    """The autocast dtype for `model.dtype` (None: plain fp32)."""
    return None if cfg.dtype == "float32" else getattr(torch, cfg.dtype)


# ---- batch-level rewards ----------------------------------------------------------------------

def attach_ig(trajs: list[Trajectory], scorer: Any, seed: int = 0,
              options: dict[str, Any] | None = None) -> dict[str, float]:
    """Step 3, batch-level rewards: fill the value of every `query` span that the environment
    left empty with IG-Search's information gain, scored by the policy on the token ids it
    saw (chat template and spliced documents as the engine recorded them; the batch-wide
    counterfactual pool is why this cannot happen inside `step()`). `options` go to
    `information_gain_ids` (n_random, aggregate, ...). Returns the `ig/*` diagnostics."""
    from envgym.environments.search.ig import ig_diagnostics, information_gain_ids

    todo = [t for t in trajs if t.error is None and t.outcome.get("golden_answers") and any(
        s.kind == "query" and s.value is None for turn in t.turns for s in turn.spans)]
    if not todo:
        return {"ig/n_steps": 0.0}
    if getattr(scorer, "chat", None) is None:
        raise InvalidConfig("credit `ig` scores the policy's own token ids: use a token policy "
                            "(hf:, vllm:, openai: in token mode)")
    results = information_gain_ids(todo, scorer, [t.outcome["golden_answers"] for t in todo],
                                   seed=seed, **(options or {}))
    filled = 0
    for traj, result in zip(todo, results):
        for row in result["steps"]:
            spans = [s for s in traj.turns[row["turn"]].spans if s.kind == "query" and s.value is None]
            if row["ig"] is not None and spans:
                spans[0].value = float(row["ig"])
                filled += 1
    stats = ig_diagnostics(results)
    stats["ig/filled_spans"] = float(filled)
    return stats

"""How the learner spreads over `torchrun` ranks: DDP (replicas) or FSDP2 (shards).

`parallelize` wraps the causal LM in `LogprobModel` (the unit whose forward the wrappers
hook) and then, with more than one rank, in DDP or FSDP2's `fully_shard` (one unit per
decoder layer plus the root, so only one layer's full parameters are materialised at a time).

Memory per rank for full fine-tuning with AdamW, P parameters, N ranks (bytes per parameter:
fp32 master 4, fp32 gradient 4, Adam moments 8 = 16). Qwen2.5-7B: P = 7.6e9, 28 layers,
hidden 3584, vocabulary 152k.

    DDP:  16 P                     122 GB per rank: more than an 80 GB GPU before activations
    FSDP: 16 P / N + 2 P_layer     on 8 ranks 15.2 GB + ~0.9 GB (one gathered bf16 layer, and
                                   the next one prefetched)

plus activations (gradient checkpointing keeps one bf16 hidden state per layer: 2 B * tokens *
hidden * layers = 3.3 GB at 16k tokens per micro-batch) and the vocabulary projection, which
`LogprobModel` computes in chunks of 256 loss positions (256 * 152k * 4 B = 0.16 GB per fp32
temporary, a few alive at once) instead of tokens * vocab * 4 B = 10 GB per temporary at 16k
tokens. The KL reference is sharded the same way in bf16 (2 P / N = 1.9 GB on 8 ranks), or is
LoRA's disabled-adapter view (0 bytes). Total on 8 x 80 GB: ~22 GB per rank plus the vLLM
engine's share (`vllm_gpu_memory_utilization`: bf16 weights 15 GB + KV cache).

Collectives: FSDP all-gathers in every forward, so every rank must run the same number of
forwards. `lockstep_logprobs` and `zero_backward` keep ranks with fewer (or no) sequences in
step with a one-token dummy forward.

FSDP2 runs on CPU with gloo in torch 2.13 (tested with two processes); rollouts need full
weights, so under FSDP the rollout policy is a separate engine (vLLM, or an `hf` copy on CPU)
that `sync_weights` feeds with the gathered state dict.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from envgym.agents.config import ModelConfig
from envgym.agents.learner import LogprobModel, TokenBatch, compute_dtype, dist_info, token_logprobs

__all__ = ["is_fsdp", "lockstep_logprobs", "parallelize", "rollout_weights", "shard",
           "zero_backward"]


def parallelize(model: Any, ref: LogprobModel | None, cfg: ModelConfig
                ) -> tuple[Any, LogprobModel | None]:
    """(training module, reference) for this world size and `cfg.strategy`."""
    wrapped = LogprobModel(model, compute_dtype(cfg), chunk=cfg.logprob_chunk)
    _, world = dist_info()
    if world == 1:
        return wrapped, ref
    if cfg.strategy == "fsdp":
        if ref is not None and not ref.disable_adapter:
            ref = shard(ref, cfg)
        return shard(wrapped, cfg), ref
    device = next(model.parameters()).device
    ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(wrapped, device_ids=ids), ref


def shard(wrapped: LogprobModel, cfg: ModelConfig) -> LogprobModel:
    """FSDP2 in place: each decoder layer its own unit, the root holds embeddings, final norm
    and the (tied) head. Parameters are kept fp32 sharded; with bf16 compute the gathered
    copies are bf16 and gradients are reduced in fp32."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    dtype = compute_dtype(cfg)
    mp = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=torch.float32) if dtype else \
        MixedPrecisionPolicy()
    for layer in decoder_layers(wrapped.module):
        fully_shard(layer, mp_policy=mp)
    fully_shard(wrapped, mp_policy=mp)
    return wrapped


def decoder_layers(model: Any) -> list[torch.nn.Module]:
    """The transformer blocks (`model.get_decoder().layers` for HF causal LMs)."""
    layers = getattr(model.get_decoder(), "layers", None)
    if layers is None:
        raise ValueError(f"{type(model).__name__}: no `layers` on its decoder to shard; "
                         "use model.strategy = 'ddp'")
    return list(layers)


def is_fsdp(model: Any) -> bool:
    from torch.distributed.fsdp import FSDPModule

    return isinstance(model, FSDPModule)


def _dummy(model: Any, device: Any) -> TokenBatch:
    """Two tokens, the second one scored: the smallest forward that reaches every weight."""
    zeros = torch.zeros(1, 2, device=device)
    return TokenBatch(torch.zeros(1, 2, dtype=torch.long, device=device),
                      torch.ones(1, 2, dtype=torch.long, device=device),
                      torch.tensor([[0.0, 1.0]], device=device), zeros, zeros)


def lockstep_logprobs(model: Any, batch: TokenBatch, temperature: float, device: Any,
                      size: int = 8) -> torch.Tensor:
    """Log-probs of `batch` (no grad) in chunks of `size` rows, on CPU; ranks with fewer
    chunks run dummy forwards so every rank runs as many as the busiest (FSDP gathers)."""
    n = math.ceil(len(batch) / size)
    total = n
    if dist_info()[1] > 1:
        t = torch.tensor([n], dtype=torch.long)
        torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)
        total = int(t)
    parts = []
    for i in range(total):
        if i < n:
            rows = list(range(i * size, min((i + 1) * size, len(batch))))
            parts.append(token_logprobs(model, batch.select(rows).to(device), temperature)[0].cpu())
        else:
            token_logprobs(model, _dummy(model, device), temperature)
    return torch.cat(parts) if parts else torch.zeros_like(batch.advantages)


def zero_backward(model: Any, device: Any) -> None:
    """A backward that contributes a zero gradient, through a real forward: DDP and FSDP
    reduce gradients from hooks that only a forward arms, so a rank without data must still
    run one to keep the others from waiting forever."""
    logp, _ = token_logprobs(model, _dummy(model, device), 1.0)
    (logp.sum() * 0.0).backward()


def rollout_weights(model: Any) -> dict[str, torch.Tensor]:
    """Full weights for a rollout engine, on every rank (each rank has its own engine):
    gathered under FSDP, with LoRA adapters merged into the base weights."""
    from envgym.agents.checkpoint import model_state
    from envgym.agents.learner import unwrap

    base = unwrap(model)
    if hasattr(base, "merge_adapter"):
        from envgym.agents.policies.vllm import lora_merged_state
        return lora_merged_state(base)
    return model_state(model, every_rank=True)

"""Padding-free update micro-batches: whole sequences packed end to end under a token budget.

Why: a padded `[B, T_max]` batch spends compute and activation memory on padding, and its
attention costs B * T_max^2 however short most rows are. Packed, a micro-batch is one row of
the real tokens of several sequences (`[1, N]`), position ids restart at 0 for each, and
attention never crosses a sequence boundary, so every sequence sees exactly what it saw
alone and the per-token log-probs (hence losses and gradients) equal the padded ones.

Attention over the packed row, by backend:
- `flash_attention_2/3`: transformers' own varlen path, from the reset position ids and the
  `cu_seq_lens_*` keyword arguments passed with them.
- `sdpa` (the default): the model is switched to `envgym_packed`, registered here. Without
  `cu_seq_lens_q` it *is* transformers' sdpa (generation and every other caller see no
  change); with it, it runs causal sdpa on each sequence's slice, so the cost is the sum of
  T_i^2 and no `[N, N]` mask is ever built. It decides from its arguments alone, so
  gradient checkpointing's recompute takes the same path as the forward.
- anything else (`eager`, ...): no mask is passed and transformers derives a block-diagonal
  causal mask from the reset position ids (exact, but quadratic in N).

Shared prefixes (with `envgym_packed` only). The G members of a group start with the same
prompt (in multi-turn episodes, often hundreds of tokens of system prompt and tool schema).
Packed, a row that shares at least `MIN_SHARED` leading tokens with an earlier row of the
micro-batch stores only its own tail; its tail attends to the earlier row's copy of the
prefix and its positions continue from the prefix's length. A causal model's states at
those positions depend only on those tokens, so the values are the same, and the prefix's
gradient is the sum of what every sharer sends back, as if each had its own copy. The
forward and backward then cost one prefix per group instead of G.

Micro-batches are formed per minibatch by first-fit decreasing over sequence lengths; a
sequence longer than the budget gets a micro-batch of its own. The loss is still reduced
with the minibatch's denominators, so how sequences are packed never changes the update.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

__all__ = ["PACKED_ATTENTION", "Packed", "budget_groups", "micro_batches", "pack_rows",
           "packed_attention", "packed_forward_kwargs", "use_packed_attention"]

PACKED_ATTENTION = "envgym_packed"
"""The attention implementation name `use_packed_attention` registers (sdpa models only)."""

MIN_SHARED = 16
"""Leading tokens a row must share with an earlier one to reuse its copy of them."""


# ---- which rows share a micro-batch -------------------------------------------------------------

def budget_groups(lengths: list[int], budget: int) -> list[list[int]]:
    """Indices into `lengths`, grouped so that each group's total is at most `budget`
    (first-fit decreasing; a longer-than-budget item is a group alone). Each group lists its
    indices in ascending order, and groups come in order of their first index, so the result
    depends on the lengths only."""
    if budget <= 0:
        raise ValueError(f"a token budget must be positive, got {budget}")
    bins: list[tuple[int, list[int]]] = []  # (tokens used, members)
    for i in sorted(range(len(lengths)), key=lambda j: (-lengths[j], j)):
        for b, (used, members) in enumerate(bins):
            if used + lengths[i] <= budget:
                bins[b] = (used + lengths[i], members + [i])
                break
        else:
            bins.append((lengths[i], [i]))
    return sorted((sorted(m) for _, m in bins), key=lambda m: m[0])


def micro_batches(rows: torch.Tensor, lengths: torch.Tensor, budget: int, parts: int
                  ) -> list[torch.Tensor]:
    """Split a minibatch's `rows` (batch indices) into micro-batches: `parts` contiguous
    parts (`optim.grad_accum`), each packed under `budget` tokens when `budget` > 0. Under
    DDP/FSDP every rank gets as many micro-batches as the busiest one (empty tensors pad the
    list; the update runs a zero backward for them) so collectives stay in lockstep."""
    out: list[torch.Tensor] = []
    for part in torch.tensor_split(rows, parts):
        if budget <= 0 or len(part) == 0:
            out.append(part)
            continue
        groups = budget_groups([int(lengths[r]) for r in part], budget)
        out += [part[torch.tensor(g, dtype=torch.long)] for g in groups]
    total = _max_over_ranks(len(out))
    return out + [rows[:0]] * (total - len(out))


def _max_over_ranks(n: int) -> int:
    if not (torch.distributed.is_available() and torch.distributed.is_initialized()):
        return n
    t = torch.tensor([n], dtype=torch.long)
    torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)
    return int(t)


# ---- one packed row -----------------------------------------------------------------------------

@dataclass
class Packed:
    """The real tokens of a padded `[B, T]` batch laid end to end.

    `index[b, t]` is where token (b, t) is computed in the packed row (-1 on padding; for a
    shared prefix, the earlier row's copy). `cu_seqlens` are the sequence boundaries
    (`[0, n_0, n_0 + n_1, ...]`, int32 as varlen kernels want) when nothing is shared;
    `segments` list each stored run of tokens as `(start, end, prefix_start, prefix_end)`:
    the run attends causally to itself after the prefix `[prefix_start, prefix_end)`."""

    input_ids: torch.Tensor  # [1, N]
    position_ids: torch.Tensor  # [1, N]
    index: torch.Tensor  # [B, T]
    cu_seqlens: torch.Tensor  # [B' + 1] over the non-empty rows
    max_len: int
    segments: list[tuple[int, int, int, int]] | None = None


def pack_rows(input_ids: torch.Tensor, attention_mask: torch.Tensor,
              share_prefixes: bool = False) -> Packed:
    """Pack each row's real tokens (any padding side; a row's real tokens are contiguous);
    with `share_prefixes`, a row stores only what follows its longest prefix (of at least
    `MIN_SHARED` tokens) in common with an earlier row that stores its whole sequence."""
    real = attention_mask.bool()
    if share_prefixes:
        return _pack_shared(input_ids, real)
    lengths = real.sum(-1)
    index = torch.where(real, real.flatten().cumsum(0).view_as(real) - 1, -1)
    positions = (real.long().cumsum(-1) - 1)[real]
    kept = lengths[lengths > 0].to(torch.int32)
    cu = F.pad(kept.cumsum(0, dtype=torch.int32), (1, 0))
    return Packed(input_ids[real][None], positions[None], index, cu,
                  int(kept.max()) if len(kept) else 0)


def _pack_shared(input_ids: torch.Tensor, real: torch.Tensor) -> Packed:
    seqs = [input_ids[b][real[b]] for b in range(len(input_ids))]
    index = torch.full(real.shape, -1, dtype=torch.long, device=input_ids.device)
    roots: list[tuple[int, int]] = []  # (row, start in the packed row) of whole sequences
    ids, positions, segments, at = [], [], [], 0
    for b, seq in enumerate(seqs):
        root, shared = _best_prefix(seq, roots, seqs)
        own = seq[shared:]
        cols = real[b].nonzero().squeeze(-1)
        if shared:
            index[b, cols[:shared]] = root + torch.arange(shared, device=index.device)
        index[b, cols[shared:]] = at + torch.arange(len(own), device=index.device)
        if len(own):
            segments.append((at, at + len(own), root, root + shared))
        if not shared and len(own):
            roots.append((b, at))
        ids.append(own)
        positions.append(torch.arange(shared, len(seq), device=input_ids.device))
        at += len(own)
    lengths = [e - s for s, e, _, _ in segments]
    return Packed(torch.cat(ids)[None], torch.cat(positions)[None], index,
                  F.pad(torch.tensor(lengths, dtype=torch.int32).cumsum(0, dtype=torch.int32),
                        (1, 0)), max(lengths, default=0), segments)


def _best_prefix(seq: torch.Tensor, roots: list[tuple[int, int]], seqs: list[torch.Tensor]
                 ) -> tuple[int, int]:
    """(start of the root's copy, tokens shared) for the root sharing most leading tokens
    with `seq`, or (0, 0) below `MIN_SHARED`."""
    best = (0, 0)
    for row, start in roots:
        other = seqs[row]
        n = min(len(seq), len(other))
        if n < max(MIN_SHARED, best[1] + 1):
            continue
        differ = (seq[:n] != other[:n]).nonzero()
        shared = int(differ[0]) if len(differ) else n
        if shared >= MIN_SHARED and shared > best[1]:
            best = (start, shared)
    return best


# ---- attention over a packed row ---------------------------------------------------------------

def use_packed_attention(model: Any) -> str:
    """Make `model` packable without an `[N, N]` mask where it can be (see the module
    docstring) and return the attention implementation it now has."""
    config = getattr(model, "config", None)
    impl = getattr(config, "_attn_implementation", None)
    full = all(t == "full_attention" for t in (getattr(config, "layer_types", None) or []))
    if impl == "sdpa" and full and hasattr(model, "set_attn_implementation"):
        _register()
        model.set_attn_implementation(PACKED_ATTENTION)
        impl = PACKED_ATTENTION
    return impl or "eager"


def packed_forward_kwargs(packed: Packed, impl: str) -> dict[str, Any]:
    """Keyword arguments for a decoder forward over `packed` with attention `impl`."""
    kwargs: dict[str, Any] = {"input_ids": packed.input_ids, "position_ids": packed.position_ids,
                              "use_cache": False}
    if packed.segments is not None:
        if impl != PACKED_ATTENTION:
            raise ValueError(f"shared prefixes need the {PACKED_ATTENTION} attention, not {impl}")
        kwargs["envgym_segments"] = packed.segments
    if impl == PACKED_ATTENTION or impl.startswith("flash_attention"):
        cu = packed.cu_seqlens.to(packed.input_ids.device)
        kwargs.update(cu_seq_lens_q=cu, cu_seq_lens_k=cu, max_length_q=packed.max_len,
                      max_length_k=packed.max_len)
    if impl == PACKED_ATTENTION:  # per-sequence causal attention needs no mask at all
        kwargs["attention_mask"] = {"full_attention": None, "sliding_attention": None}
    return kwargs


def packed_attention(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                     attention_mask: torch.Tensor | None, dropout: float = 0.0,
                     scaling: float | None = None, cu_seq_lens_q: torch.Tensor | None = None,
                     envgym_segments: list[tuple[int, int, int, int]] | None = None,
                     **kwargs: Any) -> tuple[torch.Tensor, None]:
    """Causal attention of each packed sequence over itself (`[1, heads, N, dim]` in,
    `[1, N, heads, dim]` out), after its shared prefix where it has one; plain transformers
    sdpa when no boundaries are given."""
    if cu_seq_lens_q is None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward
        return sdpa_attention_forward(module, query, key, value, attention_mask,
                                      dropout=dropout, scaling=scaling, **kwargs)
    if query.shape[0] != 1:
        raise ValueError(f"a packed forward has one row, got {query.shape[0]}")
    if envgym_segments is None:
        bounds = cu_seq_lens_q.tolist()
        envgym_segments = [(s, e, s, s) for s, e in zip(bounds[:-1], bounds[1:])]
    parts = [_segment(query, key, value, seg, scaling, dropout) for seg in envgym_segments
             if seg[1] > seg[0]]
    return torch.cat(parts, dim=2).transpose(1, 2).contiguous(), None


def _segment(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
             seg: tuple[int, int, int, int], scaling: float | None, dropout: float
             ) -> torch.Tensor:
    """One stored run's attention: causal over itself, everything of its prefix before it."""
    s, e, ps, pe = seg
    gqa = query.shape[1] != key.shape[1]
    if pe == ps:
        return F.scaled_dot_product_attention(
            query[:, :, s:e], key[:, :, s:e], value[:, :, s:e], is_causal=True, scale=scaling,
            dropout_p=dropout, enable_gqa=gqa)
    k = torch.cat([key[:, :, ps:pe], key[:, :, s:e]], dim=2)
    v = torch.cat([value[:, :, ps:pe], value[:, :, s:e]], dim=2)
    mask = torch.ones(e - s, k.shape[2], dtype=torch.bool, device=query.device).tril(pe - ps)
    return F.scaled_dot_product_attention(query[:, :, s:e], k, v, attn_mask=mask,
                                          scale=scaling, dropout_p=dropout, enable_gqa=gqa)


_REGISTERED = False


def _register() -> None:
    global _REGISTERED
    if _REGISTERED:
        return
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(PACKED_ATTENTION, packed_attention)
    AttentionMaskInterface.register(PACKED_ATTENTION, sdpa_mask)
    _REGISTERED = True

"""`hf:PATH_OR_NAME` — a transformers causal LM as a token-exact policy and scorer.

Generation is our own short sampling loop over a left-padded batch with a KV cache, rather
than `model.generate`, so that the returned log-probs are exactly those of the distribution
sampled from, and stop strings cut generation at the token that completes them.
`sequence_logprobs` is the same computation with gradients, for the learner.

KV reuse across turns (`kv_reuse=True`, the default). Each generated row's KV state is kept
in a prefix cache addressed by token ids (`agents/policies/kv.py`): the next turn of an
episode, whose prompt extends the last one plus the sampled ids, prefills only the new
observation tokens; identical prompts in one call (a group's G members, SLATE siblings) are
prefilled once and their cache expanded, and what is kept afterwards stores that shared
prompt's KV once, each member holding only its own tail; a fork finds its parent's cache by
its ids while the parent's entry lives. ARTIST's heads are whole episodes, whose entries the
engine releases when they end, before `collect_hierarchical` forks them: a head's N - 1
forks therefore prefill the head's prefix again, once for all of them (identical prompts).
The cache is dropped whenever the weights change (parameter versions are checked at every
call) and bounded by `kv_cache_mb`, which counts only the states kept between calls. Ids and
log-probs match a full recompute (tested), because a row's cached positions sit behind
masked padding with their original position ids.

Prefill asks the model for the last position's logits only (`logits_to_keep=1`, where the
model takes it): the others would be `[rows, prompt, vocab]` floats computed to be dropped,
1.9 GB for 16 x 400 tokens at Qwen's 151k vocabulary.

Generation runs under `torch.inference_mode`, not just `no_grad`: no tensor it makes gets a
version counter or view tracking, which is about a tenth of a small model's decode on one
CPU thread, and changes no number (ids and log-probs are bitwise the same, tested). Its
tensors (the kept KV entries among them) are only ever read by later generation calls.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from envgym.agents.policies.kv import KVEntry, PrefixCache
from envgym.errors import PolicyError
from envgym.policy import Completion, SamplingParams, row_sampling
from envgym.tokens import ChatTokenizer

__all__ = ["HFPolicy", "sample_tokens", "sequence_logprobs"]


def _positions(attention_mask: torch.Tensor) -> torch.Tensor:
    """Position ids that ignore left padding: the first real token is position 0."""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def sequence_logprobs(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                      temperature: float = 1.0) -> torch.Tensor:
    """Per-token log p(ids[t] | ids[:t]) of a (left- or right-) padded batch, with grad.

    Returns a `[B, T]` float32 tensor aligned with `input_ids`; column 0 (no context) and
    padding positions are 0. `temperature` divides the logits, as when sampling.
    """
    out = model(input_ids=input_ids, attention_mask=attention_mask,
                position_ids=_positions(attention_mask), use_cache=False)
    logits = out.logits[:, :-1].float() / (temperature if temperature > 0 else 1.0)
    target = input_ids[:, 1:]
    picked = logits.gather(-1, target.unsqueeze(-1)).squeeze(-1) - logits.logsumexp(-1)
    picked = picked * attention_mask[:, 1:].to(picked.dtype)
    return F.pad(picked, (1, 0))


def sample_tokens(logits: torch.Tensor, sampling: SamplingParams,
                  generator: torch.Generator | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample one token per row; return `(tokens, logprobs under logits / T)`."""
    scaled = logits.float() / (sampling.temperature if not sampling.greedy else 1.0)
    logprobs = scaled.log_softmax(-1)
    if sampling.greedy:
        tokens = scaled.argmax(-1)
    else:
        filtered = _top_k_top_p(scaled, sampling.top_k, sampling.top_p)
        probs = filtered.softmax(-1)
        tokens = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    return tokens, logprobs.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


class _Sampler:
    """Per-row sampling: each row has its own temperature, top-k/top-p and uniform stream.

    Row i's t-th token is the inverse CDF of its (filtered) distribution at `u[i, t]`, and
    `u[i]` comes from a generator seeded by that row's seed alone. So what a row samples
    depends on its own logits and seed, never on which other rows share the batch or how
    much left padding they brought (padding changes logits only at float-rounding level).
    """

    def __init__(self, rows: list[SamplingParams], fallback: torch.Generator,
                 device: torch.device):
        self.rows = rows
        self.greedy = torch.tensor([r.greedy for r in rows], device=device)
        self.temps = torch.tensor([[1.0 if r.greedy else r.temperature] for r in rows],
                                  device=device)
        steps = max(1, max(r.max_tokens for r in rows))
        seeds = [r.seed if r.seed is not None else
                 int(torch.randint(2**62, (1,), generator=fallback)) for r in rows]
        self.uniform = torch.stack([
            torch.rand(steps, generator=torch.Generator().manual_seed(int(s) & (2**63 - 1)),
                       dtype=torch.float64) for s in seeds]).to(device)
        self.filters: dict[tuple[int, float], list[int]] = {}
        for i, r in enumerate(rows):
            if not r.greedy and (r.top_k > 0 or r.top_p < 1.0):
                self.filters.setdefault((r.top_k, r.top_p), []).append(i)

    def sample(self, logits: torch.Tensor, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Tokens for every row at decode `step`, and their log-probs under logits / T."""
        scaled = logits.float() / self.temps
        logprobs = scaled.log_softmax(-1)
        tokens = scaled.argmax(-1)
        if not bool(self.greedy.all()):
            filtered = scaled
            for (k, p), idx in self.filters.items():
                filtered = filtered.clone() if filtered is scaled else filtered
                filtered[idx] = _top_k_top_p(scaled[idx], k, p)
            cdf = filtered.double().softmax(-1).cumsum(-1)
            u = self.uniform[:, step:step + 1] * cdf[:, -1:]
            drawn = torch.searchsorted(cdf, u, right=True).squeeze(-1)
            tokens = torch.where(self.greedy, tokens, drawn.clamp(max=cdf.shape[-1] - 1))
        return tokens, logprobs.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


def _top_k_top_p(logits: torch.Tensor, top_k: int, top_p: float) -> torch.Tensor:
    if 0 < top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = logits.sort(-1, descending=True)
        cumulative = sorted_logits.softmax(-1).cumsum(-1)
        drop = cumulative - sorted_logits.softmax(-1) >= top_p  # keep the token crossing top_p
        logits = logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
    return logits


class HFPolicy:
    """A transformers model on CPU or GPU, with its (append-only) chat template.

    Options: `device` ("auto", "cpu", "cuda:0"), `dtype` ("auto" = bf16 on GPU, fp32 on
    CPU), `chat_template` (override), `batch_size`, `seed`, `threads` (torch CPU threads; on
    a shared CPU one thread is often several times faster than oversubscribing),
    `kv_reuse` and `kv_cache_mb` (the prefix cache of the module docstring; off recomputes
    every prompt in full, as before).
    """

    def __init__(self, path: str, *, device: str = "auto", dtype: str = "auto",
                 chat_template: str | None = None, batch_size: int = 64, seed: int = 0,
                 model: Any = None, tokenizer: Any = None, trust_remote_code: bool = False,
                 threads: int | None = None, kv_reuse: bool = True,
                 kv_cache_mb: float = 1024.0, autocast: str | None = None):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.name = f"hf:{path}"
        self.device = torch.device(("cuda" if torch.cuda.is_available() else "cpu")
                                   if device == "auto" else device)
        torch_dtype = _dtype(dtype, self.device)
        try:
            self.tokenizer = tokenizer or AutoTokenizer.from_pretrained(
                path, trust_remote_code=trust_remote_code)
            self.model = model or AutoModelForCausalLM.from_pretrained(
                path, dtype=torch_dtype, trust_remote_code=trust_remote_code)
        except (OSError, ValueError) as e:
            raise PolicyError(f"Cannot load hf:{path}: {e}. Pass a local model directory "
                              "(e.g. one made by `envgym tiny-model --out DIR`).") from e
        self.model.to(self.device).eval()
        eos = self.model.generation_config.eos_token_id
        eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
        self.chat = ChatTokenizer(self.tokenizer, chat_template,
                                  eos_ids + [self.tokenizer.eos_token_id])
        self.pad_id = self.tokenizer.pad_token_id
        if self.pad_id is None:
            self.pad_id = next(iter(self.chat.eos_token_ids))
        self.batch_size = batch_size
        self.autocast = (_dtype(autocast, self.device)
                         if autocast and autocast != "float32" and self.device.type == "cuda"
                         else None)
        """Compute dtype for generation on a GPU (the trainer passes its bf16 `model.dtype`:
        the learner's fp32 master weights then sample in bf16, as they train)."""
        params = inspect.signature(self.model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        self._last_only = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
        if threads:
            torch.set_num_threads(threads)
        self.generator = torch.Generator().manual_seed(seed)
        """Seeds rows whose params carry none (unseeded calls still differ call to call)."""
        self.kv = PrefixCache(int(kv_cache_mb * 2**20)) if kv_reuse else None
        self._weights = self._weights_key()
        self.prefill_tokens = 0
        """Prompt tokens run through the model (a benchmark's measure of reuse)."""

    per_row_sampling = True
    """`generate` takes one `SamplingParams` per prompt (see `envgym.policy`)."""

    # ---- generation ------------------------------------------------------------------------

    def generate(self, prompts: Sequence[Sequence[int]],
                 sampling: SamplingParams | Sequence[SamplingParams]) -> list[Completion]:
        """Sample one completion per token-id prompt, in batches of `batch_size`; `sampling`
        is one `SamplingParams` for all or one per prompt (`envgym.policy.row_sampling`)."""
        if prompts and not isinstance(prompts[0][0] if prompts[0] else 0, int):
            raise PolicyError("HFPolicy.generate takes token-id prompts; use policy.chat.")
        rows = row_sampling(sampling, len(prompts))
        out: list[Completion] = []
        with torch.autocast(self.device.type, dtype=self.autocast,
                            enabled=self.autocast is not None):
            for i in range(0, len(prompts), self.batch_size):
                out += self._generate_batch([list(p) for p in prompts[i:i + self.batch_size]],
                                            rows[i:i + self.batch_size])
        return out

    def generate_isolated(self, prompt: Sequence[int], sampling: SamplingParams) -> Completion:
        """`generate([prompt], sampling)` in a forward of its own from a full prefill, past
        the prefix cache: what it samples depends on nothing but its ids, seed and the weights
        (`serve-policy` decodes seeded rows this way, so load cannot change them)."""
        kv, self.kv = self.kv, None
        try:
            return self._generate_batch([list(prompt)], row_sampling(sampling, 1))[0]
        finally:
            self.kv = kv

    @torch.inference_mode()
    def _generate_batch(self, prompts: list[list[int]], params: list[SamplingParams]
                        ) -> list[Completion]:
        plan = self._prefill(prompts)
        logits, mask, cache = plan.logits, plan.mask, plan.cache
        position = _positions(mask)[:, -1]
        rows = [_Row(p) for p in params]
        sampler = _Sampler(params, self.generator, self.device)
        for step in range(max(p.max_tokens for p in params)):
            tokens, logprobs = sampler.sample(logits, step)
            for row, tok, lp in zip(rows, tokens.tolist(), logprobs.tolist()):
                if not row.done:
                    row.add(tok, lp, self)
            if all(r.done for r in rows):
                break
            tokens = torch.tensor([self.pad_id if r.done else r.ids[-1] for r in rows],
                                  device=self.device)
            mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
            position = position + 1
            out = self.model(input_ids=tokens[:, None], attention_mask=mask,
                             position_ids=position[:, None], use_cache=True,
                             **{self._cache_arg: cache})
            logits, cache = out.logits[:, -1], _cache_of(out)
        if self.kv is not None:
            self._keep(plan, prompts, rows, cache)
        return [r.completion(self) for r in rows]

    def _prefill(self, prompts: list[list[int]]) -> _Plan:
        """Run the prompts' uncached tokens: each distinct prompt once, from its longest
        cached prefix, then expand to one row per prompt."""
        if self.kv is None:
            ids, mask = self._left_pad(prompts)
            out = self.model(input_ids=ids, attention_mask=mask, position_ids=_positions(mask),
                             use_cache=True, **self._last_only)
            self.prefill_tokens += int(mask.sum())
            return _Plan(out.logits[:, -1], mask, _cache_of(out))
        if self._weights_key() != self._weights:  # an optimiser step or a weight sync
            self.kv.clear()
            self._weights = self._weights_key()
        distinct: dict[tuple[int, ...], int] = {}
        of_row = [distinct.setdefault(tuple(p), len(distinct)) for p in prompts]
        unique = [list(p) for p in distinct]
        hits = [self.kv.lookup(p) for p in unique]
        cached = [n for _, n, _ in hits]
        width = max(cached)
        s_ids, s_mask = self._left_pad([p[n:] for p, n in zip(unique, cached)])
        c_mask = torch.zeros((len(unique), width), dtype=torch.long)
        for u, n in enumerate(cached):
            c_mask[u, width - n:] = 1
        mask = torch.cat([c_mask.to(self.device), s_mask], dim=1)
        past = {self._cache_arg: self._stack(hits, width)} if width else {}
        out = self.model(input_ids=s_ids, attention_mask=mask, use_cache=True,
                         position_ids=_positions(mask)[:, width:], **past, **self._last_only)
        self.prefill_tokens += int(s_mask.sum())
        logits, cache = out.logits[:, -1], _cache_of(out)
        if len(unique) < len(prompts):
            index = torch.tensor(of_row, device=self.device)
            logits, mask = logits.index_select(0, index), mask.index_select(0, index)
            for layer in cache.layers:
                layer.keys = layer.keys.index_select(0, index)
                layer.values = layer.values.index_select(0, index)
        suffix = [len(p) - n for p, n in zip(unique, cached)]
        return _Plan(logits, mask, cache, of_row, hits, width, s_ids.shape[1], suffix)

    def _stack(self, hits: list[tuple[KVEntry | None, int, int | None]], width: int) -> Any:
        """A batch cache of the hits' prefixes, left-padded (masked) to `width`."""
        from transformers import DynamicCache

        some = next(e for e, n, _ in hits if n)
        layers = []
        for k_, v_ in zip(some.keys, some.values):
            shape = (len(hits), k_.shape[0], width, k_.shape[2])
            layers.append([k_.new_zeros(shape), v_.new_zeros((*shape[:3], v_.shape[2]))])
        for u, (e, n, _) in enumerate(hits):
            if n:
                for i, (k, v) in enumerate(layers):
                    e.write_prefix(i, n, k[u, :, width - n:], v[u, :, width - n:])
        return DynamicCache([tuple(kv) for kv in layers])

    def _keep(self, plan: _Plan, prompts: list[list[int]], rows: list[_Row], cache: Any) -> None:
        """Store each row's state: its prompt plus the sampled ids that were fed back (the
        last sampled id never was; the next turn prefills it with the observation)."""
        if not _plain_layers(cache):
            return  # sliding-window or offloaded layers: not a prefix-reusable state
        start = plan.width + plan.suffix_width
        members = Counter(plan.of_row)
        anchors: dict[int, KVEntry | None] = {}
        for b, (prompt, row) in enumerate(zip(prompts, rows)):
            u = plan.of_row[b]
            entry, n, key = plan.hits[u]
            fed = max(0, len(row.ids) - 1)
            if not prompt:
                continue
            index = torch.cat([torch.arange(plan.width - n, plan.width),
                               torch.arange(start - plan.suffix[u], start),
                               torch.arange(start, start + fed)]).to(self.device)
            if u not in anchors:
                anchors[u] = self._anchor(entry, n, prompt, cache, b, index, members[u] > 1)
            parent = anchors[u]
            own = index[len(parent.ids):] if parent is not None else index
            keys = [layer.keys[b].index_select(1, own) for layer in cache.layers]
            values = [layer.values[b].index_select(1, own) for layer in cache.layers]
            full = entry is not None and n == len(entry.ids)
            self.kv.store(KVEntry(prompt + row.ids[:fed], keys, values, parent),
                          supersedes=key if full else None)

    def _anchor(self, entry: KVEntry | None, n: int, prompt: list[int], cache: Any, b: int,
                index: torch.Tensor, shared: bool) -> KVEntry | None:
        """The entry a row's kept state points at for its prompt's shared part: the group
        prompt its previous turn already shared, or (several rows of this call share the
        prompt) a new entry of the prompt, stored once; None: the row keeps all of its KV."""
        if entry is not None and entry.parent is not None and n >= len(entry.parent.ids):
            return entry.parent
        if not shared:
            return None
        head = index[:len(prompt)]
        anchor = KVEntry(list(prompt),
                         [layer.keys[b].index_select(1, head) for layer in cache.layers],
                         [layer.values[b].index_select(1, head) for layer in cache.layers])
        self.kv.store(anchor)
        return anchor

    def release(self, ids: Sequence[int]) -> None:
        """An episode ended: free its cached states (the engine calls this)."""
        if self.kv is not None:
            self.kv.release(list(ids))

    def clear_cache(self) -> None:
        """Drop every cached state (called on weight updates; safe at any time)."""
        if self.kv is not None:
            self.kv.clear()

    def _weights_key(self) -> tuple[int, int]:
        """Changes whenever a parameter is written in place or replaced."""
        params = list(self.model.parameters())
        return sum(p._version for p in params), sum(p.data_ptr() for p in params)

    def _left_pad(self, seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(1, max(len(s) for s in seqs))
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for i, s in enumerate(seqs):
            if s:
                ids[i, width - len(s):] = torch.tensor(s)
                mask[i, width - len(s):] = 1
        return ids.to(self.device), mask.to(self.device)

    # ---- scoring ---------------------------------------------------------------------------

    @torch.no_grad()
    def score(self, contexts: Sequence[str], targets: Sequence[str]) -> list[list[float]]:
        """Per-token log p(target | context), batched (the `envgym.Scorer` protocol)."""
        pairs = [(self.chat.encode(c) or [self.pad_id], self.chat.encode(t))
                 for c, t in zip(contexts, targets, strict=True)]
        return self.score_ids(pairs)

    @torch.no_grad()
    def score_ids(self, pairs: Sequence[tuple[list[int], list[int]]],
                  temperature: float = 1.0) -> list[list[float]]:
        """Like `score`, on token ids: log-probs of each target given its context."""
        result: list[list[float]] = []
        for i in range(0, len(pairs), self.batch_size):
            chunk = pairs[i:i + self.batch_size]
            ids, mask = self._left_pad([c + t for c, t in chunk])
            lp = sequence_logprobs(self.model, ids, mask, temperature)
            result += [lp[j, lp.shape[1] - len(t):].tolist() if t else []
                       for j, (_, t) in enumerate(chunk)]
        return result

    def load_state_dict(self, state_dict: dict[str, torch.Tensor]) -> None:
        """Sync weights from a learner (same architecture). Tied weights may come under one
        name only (a gathered FSDP state dict), so only untied missing names are an error."""
        from envgym.agents.checkpoint import tied_aliases

        self.clear_cache()
        missing, unexpected = self.model.load_state_dict(state_dict, strict=False)
        missing = set(missing) - set(tied_aliases(self.model))
        if missing or unexpected:
            raise PolicyError(f"load_state_dict: missing {sorted(missing)[:5]}, "
                              f"unexpected {sorted(unexpected)[:5]}")

    def close(self) -> None:
        """Nothing to release; present for symmetry with the HTTP and vLLM backends."""


@dataclass
class _Plan:
    """A prefilled batch: last logits, mask and cache, and how rows map to cached entries."""

    logits: torch.Tensor
    mask: torch.Tensor
    cache: Any
    of_row: list[int] = field(default_factory=list)
    hits: list[tuple[KVEntry | None, int, int | None]] = field(default_factory=list)
    width: int = 0
    suffix_width: int = 0
    suffix: list[int] = field(default_factory=list)


def _plain_layers(cache: Any) -> bool:
    layers = getattr(cache, "layers", None)
    return bool(layers) and all(type(x).__name__ == "DynamicLayer" for x in layers)


class _Row:
    """One sequence being generated: ids, log-probs, incremental text for stop strings."""

    def __init__(self, sampling: SamplingParams) -> None:
        self.ids: list[int] = []
        self.logprobs: list[float] = []
        self.max_tokens, self.stop = sampling.max_tokens, sampling.stop
        self.done = self.max_tokens <= 0
        self.finish_reason = "length"
        self.ended_with_eos = False
        self.text_len = 0

    def add(self, token: int, logprob: float, policy: HFPolicy) -> None:
        self.ids.append(token)
        self.logprobs.append(logprob)
        stop = self.stop
        if token in policy.chat.eos_token_ids:
            self.done, self.finish_reason, self.ended_with_eos = True, "stop", True
        elif stop:
            text = policy.chat.decode(self.ids)
            window = text[max(0, self.text_len - max(map(len, stop))):]
            self.text_len = len(text)
            if any(s in window for s in stop):
                self.done, self.finish_reason = True, "stop"
        if not self.done and len(self.ids) >= self.max_tokens:
            self.done = True

    def completion(self, policy: HFPolicy) -> Completion:
        body = self.ids[:-1] if self.ended_with_eos else self.ids
        return Completion(policy.chat.decode(body), self.ids, self.logprobs, self.finish_reason,
                          self.ended_with_eos)


def _cache_of(out: Any) -> Any:
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def _dtype(name: str, device: torch.device) -> torch.dtype:
    if name == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    try:
        return getattr(torch, name)
    except AttributeError as e:
        raise PolicyError(f"Unknown dtype {name!r}: use auto, float32, bfloat16 or float16.") from e

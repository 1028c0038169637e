"""The vllm backend: a clear error without vLLM/GPU; real checks under the `gpu` marker."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from envgym.errors import DependencyNotInstalled, PolicyError
from envgym.policy import SamplingParams, load_policy

HAVE_VLLM = importlib.util.find_spec("vllm") is not None
HAVE_GPU = torch.cuda.is_available()


@pytest.mark.skipif(HAVE_VLLM and HAVE_GPU, reason="vLLM and a GPU are present")
def test_missing_vllm_or_gpu_is_a_clear_error(tiny_dir):
    with pytest.raises((DependencyNotInstalled, PolicyError), match="vllm|GPU"):
        load_policy(f"vllm:{tiny_dir}")


@pytest.mark.gpu
@pytest.mark.skipif(not (HAVE_VLLM and HAVE_GPU), reason="needs vLLM and a CUDA GPU")
def test_vllm_greedy_matches_hf_and_weights_update(tiny_dir):
    hf = load_policy(f"hf:{tiny_dir}", device="cuda", dtype="float32")
    vl = load_policy(f"vllm:{tiny_dir}", dtype="float32", gpu_memory_utilization=0.2)
    prompts = [hf.chat.prompt_ids([{"role": "user", "content": "hi"}])]
    sampling = SamplingParams(max_tokens=8, temperature=0)
    a, b = hf.generate(prompts, sampling)[0], vl.generate(prompts, sampling)[0]
    assert a.token_ids == b.token_ids
    assert a.logprobs == pytest.approx(b.logprobs, abs=1e-2)
    vl.update_weights((n, torch.zeros_like(p)) for n, p in hf.model.named_parameters())
    flat = vl.generate(prompts, sampling)[0]
    assert flat.logprobs[0] == pytest.approx(-torch.log(torch.tensor(len(hf.tokenizer))).item(),
                                             abs=1e-3)

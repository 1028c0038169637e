"""The offline tiny model: a few-million-parameter Qwen2 and a byte-level BPE tokenizer.

Tests, the demo and CI need a real causal LM with a real chat template, but no network and
no minutes of CPU. `build_tiny_model(out)` trains a byte-level BPE tokenizer (any Unicode
string round-trips) on envgym's own text — a built-in corpus of the tags and prompts the
environments use, plus a fixed, versioned text set (`tiny_corpus_v1.json`: the opening prompts
and scripted turns of envgym's built-in single-agent environments, frozen once by
`freeze_env_texts`) — and initialises a small Qwen2 with a fixed seed. Nothing is read from the
environment registry at build time, so installing a plugin (or a change to an environment's
prompt) never changes the tiny model: the same code gives byte-identical files everywhere.
A new text set is a new file and a new `TINY_CORPUS_VERSION`, never an edit of the old one.
The result is a standard Hugging Face directory, so `hf:DIR` (and any transformers user)
loads it.
"""

from __future__ import annotations

import contextlib
import io
import json
import warnings
from collections.abc import Iterator
from pathlib import Path

__all__ = ["CHATML_TEMPLATE", "SPECIAL_TOKENS", "TINY_CORPUS_VERSION", "build_tiny_model",
           "corpus", "freeze_env_texts"]

TINY_CORPUS_VERSION = 1
_FROZEN = Path(__file__).parent / f"tiny_corpus_v{TINY_CORPUS_VERSION}.json"

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# ChatML, append-only: rendering a longer conversation never rewrites an earlier turn.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
               r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

_BUILTIN = """\
You are a helpful assistant. Think step by step, then answer.
<think> Let me think about the question. </think>
<search> who wrote the novel </search>
<information> Doc 1 (Title: "Example") The passage says the answer is 42. </information>
<answer> 42 </answer>
<tool_call>{"name": "zoom", "arguments": {"start": 0, "end": 100}}</tool_call>
<tool_response>{"mean": 1.5, "std": 0.25, "min": -3, "max": 7}</tool_response>
```python
def solve():
    n = int(input())
    print(sum(range(n + 1)))
```
Invalid action: the tool call is malformed. Use the format shown in the instructions.
The patient reports a headache and fever for three days. What is the diagnosis?
The quick brown fox jumps over the lazy dog. 0123456789 + - * / = < > ( ) [ ] { } : ; , . ! ?
Question: What is 12 + 30? Answer: 42. The final answer is \\boxed{42}. #### 42
I cannot help with that request, but here is a safe alternative.
Déjà vu, naïve café — 中文 テキスト 🙂 ∑ ≤ ≥ → € £
"""


def corpus(include_envs: bool = True) -> Iterator[str]:
    """Text the tokenizer is trained on: the built-in corpus, then the frozen episode texts."""
    yield _BUILTIN
    if include_envs:
        yield from json.loads(_FROZEN.read_text(encoding="utf-8"))["texts"]


def freeze_env_texts(path: str | Path, seeds: int = 2, max_turns: int = 3) -> int:
    """Write a new versioned text set from the registered single-agent environments (run by a
    maintainer, with only envgym's own environments registered); returns the text count."""
    texts = list(_env_texts(seeds, max_turns))
    Path(path).write_text(json.dumps({"texts": texts}, ensure_ascii=False, indent=0),
                          encoding="utf-8")
    return len(texts)


def _env_texts(seeds: int, max_turns: int) -> Iterator[str]:
    """Opening prompts and scripted turns of each registered single-agent environment.

    A broken or slow-to-import environment must not break the tiny model, so each one is
    tried in isolation and skipped on any error. Environments that run programs
    (`uses_sandbox`) are skipped too: building them would probe, and maybe warn about, a
    sandbox backend in runs (`envgym demo`) that never execute code.
    """
    import envgym
    from envgym.registration import load_entry_point

    for env_id, spec in sorted(envgym.registry().items()):
        if spec.multi_agent or _uses_sandbox(spec, load_entry_point):
            continue
        for seed in range(seeds):
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                try:
                    yield from _episode_text(env_id, spec, seed, max_turns, load_entry_point)
                except Exception:  # noqa: BLE001 - see docstring
                    break


def _uses_sandbox(spec, load) -> bool:
    try:
        return bool(getattr(load(spec.entry_point), "uses_sandbox", False))
    except Exception:  # noqa: BLE001 - an entry point that fails to load is skipped later
        return False


def _episode_text(env_id, spec, seed, max_turns, load) -> Iterator[str]:
    import envgym

    env = envgym.make(env_id)
    try:
        obs, _ = env.reset(seed=seed)
        messages = list(obs)
        yield from (m["content"] for m in obs)
        names = sorted(spec.scripted, key=lambda n: (n != "oracle", n))
        if not names:
            return
        policy = load(spec.scripted[names[0]])(seed=seed)
        for _ in range(max_turns):
            action = policy.act(env, messages)
            obs, _, term, trunc, _ = env.step(action)
            messages += [{"role": "assistant", "content": action}, *obs]
            yield action
            yield from (m["content"] for m in obs)
            if term or trunc:
                return
    finally:
        env.close()


def train_tokenizer(texts: list[str], vocab_size: int = 4096):
    """A byte-level BPE `PreTrainedTokenizerFast` with ChatML special tokens and template."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    # The same pipeline as transformers' Qwen2Tokenizer (NFC, Qwen's split regex, byte-level),
    # which `AutoTokenizer` rebuilds for a qwen2 config: training and loading must agree.
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", bos_token=None, unk_token=None,
                                   padding_side="left", clean_up_tokenization_spaces=False)
    fast.chat_template = CHATML_TEMPLATE
    return fast


def build_tiny_model(out: str | Path, *, seed: int = 0, vocab_size: int = 4096,
                     hidden_size: int = 192, layers: int = 4, include_envs: bool = True,
                     heads: int = 6, kv_heads: int = 2) -> Path:
    """Build the tiny model and tokenizer into `out` (created); returns the directory.

    head_dim is `hidden_size // heads`; vLLM's CPU attention needs 64 or more (e.g. hidden
    128 with 2 heads and 1 key-value head)."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(list(corpus(include_envs)), vocab_size)
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=hidden_size * 8 // 3,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
        max_position_embeddings=8192, tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=config.eos_token_id,
                                               pad_token_id=config.pad_token_id)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out

"""The base model shipped in the package: present, small, loadable, and reproducible from code."""

import json
from pathlib import Path

import torch

from envgym.agents.base_model import SHIPPED, build_base_tokenizer, shipped_base_model

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).parents[2]


def test_shipped_weights_are_small_and_packaged():
    files = list(SHIPPED.iterdir())
    assert sum(f.stat().st_size for f in files) <= 25 * 2**20
    assert all(f.stat().st_size <= 16 * 2**20 for f in files)
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["*"]
    assert "base_weights/*" in patterns  # the wheel carries them beside agents/


def test_shipped_model_loads_as_a_standard_qwen2_and_its_tokenizer_is_rebuilt_by_code():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = shipped_base_model()
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    shipped = AutoTokenizer.from_pretrained(path)
    assert model.config.model_type == "qwen2" and model.config.vocab_size == len(shipped)
    assert shipped.get_vocab() == build_base_tokenizer().get_vocab()
    build = json.loads((SHIPPED / "build_report.json").read_text())
    assert build["parameters"] == sum(p.numel() for p in model.parameters())


def test_policy_base_resolves_to_the_shipped_model(tmp_path):
    from envgym.agents.config import ModelConfig
    from envgym.agents.learner import load_model

    model, tokenizer, path = load_model(ModelConfig(policy="base", device="cpu"), tmp_path)
    assert Path(path) == SHIPPED and model.dtype == torch.float32  # fp32 master weights
    ids = tokenizer.apply_chat_template([{"role": "user", "content": "Which is larger: 3 or 7?"}],
                                        add_generation_prompt=True)
    assert tokenizer.decode(ids).endswith("<|im_start|>assistant\n")


def test_letter_probe_scores_the_letter_even_where_it_merges_with_the_tag():
    """The base tokenizer may write '>C' as one token; the forced choice must score from where
    the four answers' ids part, or every letter ties and the probe reads 'A' whatever the
    model prefers. A stub model that favours only C's parting token must get C."""
    from transformers import AutoTokenizer

    from envgym.agents.base_probes import _letter_choice

    tok = AutoTokenizer.from_pretrained(shipped_base_model())
    prompt = "<|im_start|>user\nWhich?<|im_end|>\n<|im_start|>assistant\n"
    ids = [tok(f"{prompt}<answer>{x}</answer>", add_special_tokens=False)["input_ids"]
           for x in "ABCD"]
    start = next(i for i in range(len(ids[0])) if len({v[i] for v in ids}) > 1)
    favoured = ids[2][start]

    class Stub:
        def __call__(self, input_ids):
            logits = torch.zeros(1, input_ids.shape[1], len(tok))
            logits[..., favoured] = 10.0
            return type("Out", (), {"logits": logits})()

    assert _letter_choice(Stub(), tok, prompt, list("ABCD")) == "C"

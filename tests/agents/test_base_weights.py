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


def test_the_shipped_chain_builds_from_one_command(tmp_path):
    """bench/base_chain.sh runs the four links of the shipped chain in order, each continuing
    from the one before with its recorded arguments (shrunk by SCALE: wiring, not a model). The
    last link must be V4W's: initialised from the v4 link, corpus 4, answer weight 50."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "SCALE": "0.002", "DEVICE": "cpu", "WORKERS": "0",
           "ENVGYM": str(Path(sys.executable).with_name("envgym")), "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(ROOT / "bench" / "base_chain.sh"), str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert list(summary["links"]) == ["v1", "v2", "v4", "v4w"]
    assert summary["links"]["v4w"]["recorded_tokens"] == 20_996_096
    last = json.loads((tmp_path / "v4w" / "report.json").read_text())["args"]
    assert last["init"] == str(tmp_path / "v4" / "model")
    assert (last["corpus_version"], last["answer_weight"], last["seed"]) == (4, 50.0, 0)
    shipped = json.loads((SHIPPED / "build_report.json").read_text())["args"]
    for key in ("lr", "corpus_version", "answer_weight", "shape", "batch_size", "seq_len"):
        assert last[key] == shipped[key], key

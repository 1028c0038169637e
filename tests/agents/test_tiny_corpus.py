"""The tiny model's tokenizer comes from a fixed, versioned text set, never from the registry."""

import hashlib

import envgym
from envgym import StepResult, TextEnv
from envgym.agents import tiny
from envgym.core import user
from envgym.registration import _REGISTRY

PLUGIN = "plugtest/Zyxwords-v0"
# A plugin whose prompt repeats invented words: a BPE trained on it would merge them.
PROMPT = " ".join(["qwxzor vlumphet", "gribbleqwx snorfax"] * 40)


class _PluginEnv(TextEnv):
    def __init__(self, **kwargs):
        super().__init__(max_turns=1, **kwargs)

    def _reset(self, seed, options):
        self.task_id = str(seed)
        return [user(PROMPT)], {}

    def _step(self, action):
        return StepResult([], {"done": 0.0}, terminated=True, info={"outcome": {"success": False}})


def _vocab() -> dict[str, int]:
    return tiny.train_tokenizer(list(tiny.corpus())).get_vocab()


def test_installing_a_plugin_does_not_change_the_tiny_tokenizer():
    before = _vocab()
    envgym.register(PLUGIN, _PluginEnv)
    try:
        assert PLUGIN in envgym.registry()
        after = _vocab()
    finally:
        _REGISTRY.pop(PLUGIN, None)
    assert after == before
    assert not any("qwxzor" in token or "snorfax" in token for token in after)


def test_the_text_set_is_the_frozen_versioned_file():
    """Editing v1 in place would silently change every tiny model: a new set is a new file."""
    digest = hashlib.sha256(tiny._FROZEN.read_bytes()).hexdigest()
    assert tiny._FROZEN.name == f"tiny_corpus_v{tiny.TINY_CORPUS_VERSION}.json"
    assert digest == FROZEN_SHA256
    texts = list(tiny.corpus())
    assert texts[0] == tiny._BUILTIN and len(texts) == 49
    assert len(tiny.train_tokenizer(texts)) == 1745  # the vocabulary the shipped demo measured


FROZEN_SHA256 = "9da6977e9015b1727eb659bc55087e662929da79f2e39c85017ff801fb037807"

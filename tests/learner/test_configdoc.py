"""docs/config.md and `--print-config` come from the pydantic models and stay in step."""

import tomllib
from pathlib import Path

import pytest

from envgym.agents import config as C
from envgym.agents.configdoc import default_config, markdown, to_toml
from envgym.errors import InvalidConfig

DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"
SECTIONS = [C.TrainConfig, C.EnvConfig, C.ModelConfig, C.RolloutConfig, C.PPOConfig,
            C.OptimConfig, C.SFTConfig, C.LogConfig]


def test_docs_config_md_is_generated_from_the_models():
    assert DOC.read_text() == markdown(), (
        "docs/config.md is stale: python -m envgym.agents.configdoc > docs/config.md")


def test_every_key_is_documented_with_its_default():
    text = markdown()
    for model in SECTIONS:
        for name, field in model.model_fields.items():
            if isinstance(field.annotation, type) and issubclass(field.annotation, C.BaseModel):
                assert f"## `[{name}]`" in text
                continue
            assert field.description, f"{model.__name__}.{name} has no docstring"
            row = next(r for r in text.splitlines() if r.startswith(f"| `{name}` |"))
            assert ("required" in row) == field.is_required(), row


def test_print_config_toml_reads_back_to_the_defaults():
    assert C.load_config(tomllib.loads(to_toml(default_config()))) == default_config()


def test_a_typo_in_a_key_gets_a_suggestion():
    with pytest.raises(InvalidConfig, match=r"rollout\.grop_size: .*did you mean 'group_size'"):
        C.load_config({"envs": [{"id": "envgym/TimeSeries-v0"}], "rollout": {"grop_size": 4}})
    with pytest.raises(InvalidConfig, match=r"envs\.0\.kwarg: .*did you mean 'kwargs'"):
        C.load_config({"envs": [{"id": "envgym/TimeSeries-v0", "kwarg": {}}]})


@pytest.mark.parametrize("base", C.GROUP_RELATIVE)
def test_group_relative_estimators_refuse_a_group_of_one(base):
    with pytest.raises(InvalidConfig, match=f"credit '{base}' compares.*group_size >= 2"):
        C.load_config({"envs": [{"id": "envgym/TimeSeries-v0"}], "credit": [base],
                       "rollout": {"group_size": 1}})
    C.load_config({"envs": [{"id": "envgym/TimeSeries-v0"}], "credit": [base],
                   "rollout": {"group_size": 2}})

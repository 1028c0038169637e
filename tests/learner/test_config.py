import pytest

from envgym.agents.config import load_config
from envgym.errors import InvalidConfig

BASE = {"envs": [{"id": "envgym/TimeSeries-v0"}]}


def test_defaults_are_valid_and_digest_ignores_run_length():
    a = load_config(BASE)
    b = load_config({**BASE, "steps": 7})
    assert a.credit == ["grpo"] and a.ppo.kl_coef == 0.0
    assert a.digest() == b.digest()
    assert a.digest() != load_config({**BASE, "seed": 1}).digest()


@pytest.mark.parametrize("override, field", [
    ({"ppo": {"clip_low": -0.1}}, "ppo.clip_low"),
    ({"ppo": {"kl_estimator": "k2"}}, "ppo.kl_estimator"),
    ({"optim": {"lr": 0}}, "optim.lr"),
    ({"rollout": {"group_size": 0}}, "rollout.group_size"),
    ({"credit": ["gigpo", "nope"]}, "credit"),
    ({"credit_options": {"gigpo": {"omega": 1}}}, "not in the chain"),
    ({"envs": [{"id": "x", "train_seeds": [0, 10], "eval_seeds": [5, 20]}]}, "overlap"),
    ({"optim": {"lr": 1e-6, "sheduler": "linear"}}, "optim.sheduler"),
    ({"envs": []}, "envs"),
    ({"credit": ["slate"]}, "rollout.branch_k"),
])
def test_invalid_config_names_the_field(override, field):
    with pytest.raises(InvalidConfig, match=field.replace(".", r"\.")):
        load_config({**BASE, **override})


def test_toml_file_and_missing_file(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('steps = 3\ncredit = ["gigpo", "ig", "filter"]\n'
                    '[credit_options.gigpo]\nomega = 0.5\n'
                    '[[envs]]\nid = "envgym/TimeSeries-v0"\nweight = 2.0\n')
    cfg = load_config(path)
    assert cfg.credit == ["gigpo", "ig", "filter"] and cfg.credit_options["gigpo"]["omega"] == 0.5
    with pytest.raises(InvalidConfig, match="does not exist"):
        load_config(tmp_path / "missing.toml")
    path.write_text("steps = ")
    with pytest.raises(InvalidConfig, match="not valid TOML"):
        load_config(path)


def test_shipped_configs_validate():
    from pathlib import Path

    import envgym.agents
    configs = sorted((Path(envgym.agents.__path__[0]) / "configs").glob("*.toml"))
    assert configs, "agents/configs ships example configs"
    for path in configs:
        load_config(path)

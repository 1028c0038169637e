import pytest

import envgym
from envgym import StepResult, TextEnv
from envgym.checker import check, malformed_actions
from envgym.core import user

ENV_IDS = sorted(envgym.registry())


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_registered_environment_passes_the_checker(env_id):
    report = check(env_id, adversary_episodes=3)  # tests/core/test_adversaries.py plays more
    assert report.ok, report.render()


def test_fuzz_has_at_least_fifty_hostile_actions():
    actions = malformed_actions(["zoom"])
    assert len(actions) >= 50 and "" in actions and any(len(a) >= 1_000_000 for a in actions)


class Liar(TextEnv):
    """Reports a reward that is not the sum of its components."""

    def _reset(self, seed, options):
        self.task_id = str(seed)
        return [user("hi")], {}

    def _step(self, action):
        result = StepResult([user("x")], {"a": 1.0}, terminated=self.turn >= 2)
        return result

    def step(self, action):
        obs, reward, term, trunc, info = super().step(action)
        return obs, reward + 1.0, term, trunc, info


class Raiser(Liar):
    def _step(self, action):
        if not action:
            raise ValueError("empty!")
        return StepResult([user("x")], {"a": 1.0}, terminated=True)

    def step(self, action):
        return TextEnv.step(self, action)


def test_checker_catches_a_reward_that_is_not_the_sum_of_components():
    report = check(Liar())
    assert not report.ok and "sum of components" in report.render()


def test_checker_catches_an_environment_that_raises_on_junk():
    report = check(Raiser())
    failed = {name for name, ok, _ in report.results if not ok}
    assert "fuzz" in failed and "empty!" in report.render()


# ---- envgym check --config ---------------------------------------------------------------------

CONSULT = "agents/configs/consult_qwen05b.toml"


def _echo_config(tmp_path, body):
    path = tmp_path / "run.toml"
    path.write_text('[[envs]]\nid = "test/Echo-v0"\n' + body)
    return path


def test_config_variants_are_the_training_and_the_eval_arguments():
    from envgym.checker import config_variants

    train, held_out = config_variants(CONSULT)
    assert (train.env_id, train.phase, train.kwargs, train.seed) == (
        "envgym/Consult-v0", "train", {"split": "train"}, 0)
    assert (held_out.phase, held_out.kwargs, held_out.seed) == ("eval", {"split": "test"}, 1_000_000)


@pytest.mark.parametrize("args,message", [
    (["--config", "no/such.toml"], "config file no/such.toml does not exist"),
    (["envgym/Search-v0", "--config", CONSULT],
     f"envgym/Search-v0 is not in {CONSULT}; its [[envs]] entries are: envgym/Consult-v0"),
])
def test_config_errors_are_one_line(args, message):
    from typer.testing import CliRunner

    from envgym.cli import app

    result = CliRunner().invoke(app, ["check", *args])
    assert result.exit_code == 2 and result.output.strip() == f"error: {message}"


def test_an_invalid_config_is_a_one_line_error(tmp_path):
    from typer.testing import CliRunner

    from envgym.cli import app

    path = tmp_path / "bad.toml"
    path.write_text('[[envs]]\nid = "envgym/Search-v0"\nweight = -1\n')
    result = CliRunner().invoke(app, ["check", "--config", str(path)])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1
    assert "invalid training config: envs.0.weight" in lines[0] and str(path) in lines[0]


def test_check_config_attacks_the_configured_arguments(tmp_path):
    """A grader that is sound by default but weak under the config's arguments fails under
    the config, in the phase (train or eval) whose arguments weaken it."""
    from tests.core.test_hacks import ID, HackSayOne, _register

    from envgym.checker import check_config
    from envgym.registration import _REGISTRY

    _register(hack_say_one=HackSayOne)
    try:
        assert check(ID, only=["hacks"]).ok
        path = _echo_config(tmp_path, "kwargs = { weak = false }\neval_kwargs = { weak = true }\n")
        train, held_out = check_config(path, hack_episodes=30, only=["hacks"])
        assert train.ok and not held_out.ok
        assert "eval: weak=True" in held_out.render() and "BEATS its ceiling" in held_out.render()
    finally:
        _REGISTRY.pop(ID, None)


def test_only_runs_the_named_checks():
    report = check("envgym/Search-v0", only=["close"])
    assert [name for name, _, _ in report.results] == ["close"] and report.ok
    with pytest.raises(ValueError, match="unknown checks"):
        check("envgym/Search-v0", only=["nope"])

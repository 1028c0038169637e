"""IG faithfulness (issue 25): every IG option is settable from a config, the shipped IG
config modulates GRPO, and Search-v0's state_key tells turns apart for GiGPO."""

from pathlib import Path

from envgym.agents.credit import compute_credit
from envgym.agents.credit.ig import SCORER_OPTIONS, scorer_options
from envgym.environments.search.env import SearchEnv

CONFIG = Path(__file__).parents[2] / "agents" / "configs" / "search_qwen05b.toml"


def test_the_shipped_ig_config_modulates_grpo_and_sets_every_option():
    from envgym.agents.config import load_config

    cfg = load_config(CONFIG)
    assert cfg.credit[:2] == ["grpo", "ig"]
    opts = cfg.credit_options["ig"]
    assert set(SCORER_OPTIONS) <= set(opts)
    assert scorer_options(opts) == {k: opts[k] for k in SCORER_OPTIONS}
    compute_credit([], cfg.credit, cfg.credit_options)  # no "has no option" error


def test_state_key_distinguishes_turns_with_the_same_documents():
    env = SearchEnv(max_turns=5)
    env.reset(seed=2)
    q = env.task["chain"][0]["query"]
    *_, first = env.step(f"<think>a</think><search> {q} </search>")
    *_, second = env.step(f"<think>b</think><search> {q} </search>")  # nothing new retrieved
    assert first["state_key"] != second["state_key"]
    other = SearchEnv(max_turns=5)
    other.reset(seed=2)
    *_, again = other.step(f"<think>c</think><search> {q} </search>")
    assert again["state_key"] == first["state_key"]  # same depth, same documents: one group

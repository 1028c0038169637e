"""bench/multiturn_vs_trl.py compares envgym with TRL at equal episodes only if both sides end
an episode on the same turns: its environment must read a turn's tool calls exactly as TRL's
`parse_response` does (issue 41)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def bench():
    pytest.importorskip("trl", reason="the comparison needs the trl extra")
    sys.path.insert(0, str(BENCH))
    import multiturn_vs_trl
    return multiturn_vs_trl


def _trl_calls(bench, tokenizer, text):
    from transformers.utils.chat_template_utils import get_json_schema
    from trl.chat_template_utils import parse_response

    tool = bench.AddToolTRL().add
    prefix = tokenizer.apply_chat_template([{"role": "user", "content": "x"}],
                                           tools=[get_json_schema(tool)],
                                           add_generation_prompt=True, tokenize=True)
    prefix = list(prefix["input_ids"] if hasattr(prefix, "keys") else prefix)
    ids = tokenizer(text + "<|im_end|>", add_special_tokens=False)["input_ids"]
    return parse_response(tokenizer, ids, prefix=prefix, tools=[tool]).get("tool_calls") or []


def test_the_bench_env_reads_tool_calls_as_trl_does(bench, tmp_path):
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema, qwen2_5_chat_template

    from envgym.agents.tiny import build_tiny_model
    tok = AutoTokenizer.from_pretrained(build_tiny_model(tmp_path / "m", include_envs=False,
                                                         hidden_size=32, layers=1, heads=2,
                                                         kv_heads=1))
    tok.chat_template = qwen2_5_chat_template
    tok = add_response_schema(tok)
    call = '<tool_call>\n{"name": "%s", "arguments": {%s}}\n</tool_call>'
    good, bad = call % ("add", '"a": 3, "b": 4'), call % ("add", '"a": 3, "b": ')
    cases = {"one": good, "text around": "I add.\n" + good + " ok", "two": good + good,
             "bad args": call % ("add", '"a": 3, "b": "x"'), "other tool": call % ("sub", ""),
             "malformed": bad, "none": "no call", "cut after one": good + ' <tool_call>\n{"na',
             "one malformed of two": good + bad}
    for name, text in cases.items():
        assert len(bench.parse_calls(text)) == len(_trl_calls(bench, tok, text)), name
    assert len(bench.parse_calls(cases["cut after one"])) == 0  # the case that differed

"""Windowed chat-template deltas: exactly the full render's, checked on schedule."""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from envgym.tokens import CHATML_TEMPLATE, ChatTokenizer, TemplateError

QWEN_LIKE = ("{% if messages[0]['role'] != 'system' %}"
             "{{ '<|im_start|>system\\nYou are a default assistant.<|im_end|>\\n' }}{% endif %}"
             + CHATML_TEMPLATE)
# append-only (earlier text never changes), but a message renders differently by position
NUMBERED = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] }}"
            "{% if message['role'] != 'assistant' %}{{ ' #' + loop.index|string }}{% endif %}"
            "{{ '\\n' + message['content'] + '<|im_end|>\\n' }}{% endfor %}"
            "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
LATE_CHANGE = ("{% for message in messages %}"
               "{% if loop.index > 24 and message['role'] != 'assistant' %}"
               "{{ '[late]' }}{% endif %}"
               "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
               "'<|im_end|>\\n' }}{% endfor %}"
               "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


@pytest.fixture(scope="module")
def tok(tiny_dir):
    return AutoTokenizer.from_pretrained(tiny_dir)


def _conversation(turns: int):
    """A long episode's (history, new, ended) steps: user, tool and spliced continuations."""
    history = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    for t in range(turns):
        history.append({"role": "assistant", "content": f"<think>step {t}</think> act {t}"})
        if t % 5 == 3:  # spliced continuation text, as Search-R1 environments send
            new = [{"role": "continuation", "content": f"\n<information>{t}</information>\n"}]
            yield list(history), new, False
            history.append(new[0])
            continue
        new = [{"role": "tool" if t % 3 else "user", "content": f"obs {t} " * 5}]
        yield list(history), new, t % 2 == 0
        history += new


def _full(tok, template):
    chat = ChatTokenizer(tok, template)
    chat.windowed = False  # the reference: every turn rendered from the whole conversation
    return chat


@pytest.mark.parametrize("template", [CHATML_TEMPLATE, QWEN_LIKE])
def test_windowed_deltas_equal_full_renders_over_a_long_episode(tok, template):
    chat, ref = ChatTokenizer(tok, template, full_check=True), _full(tok, template)
    assert chat.windowed
    for history, new, ended in _conversation(40):
        assert chat.observation_ids(history, new, ended) == ref.observation_ids(history, new, ended)


def test_a_template_that_numbers_turns_renders_in_full(tok):
    chat, ref = ChatTokenizer(tok, NUMBERED), _full(tok, NUMBERED)
    assert not chat.windowed  # the construction probe saw windows differ
    for history, new, ended in _conversation(12):
        assert chat.observation_ids(history, new, ended) == ref.observation_ids(history, new, ended)


def test_a_late_difference_is_caught_by_the_scheduled_full_check(tok):
    chat = ChatTokenizer(tok, LATE_CHANGE)
    assert chat.windowed  # the probe conversation is too short to notice
    with pytest.raises(TemplateError, match="differently in the whole conversation"):
        for history, new, ended in _conversation(40):
            chat.observation_ids(history, new, ended)


def test_the_debug_mode_checks_every_turn(tok, monkeypatch):
    monkeypatch.setenv("ENVGYM_TEMPLATE_CHECK", "full")
    chat, ref = ChatTokenizer(tok, LATE_CHANGE), _full(tok, LATE_CHANGE)
    assert chat.full_check
    steps = list(_conversation(40))
    # the first turn whose full render differs from any window: its delta has `[late]`
    first = next(i for i, (h, n, e) in enumerate(steps)
                 if "[late]" in ref.observation_text(h, n, e)
                 and n[0]["role"] != "continuation")
    for history, new, ended in steps[:first]:
        chat.observation_ids(history, new, ended)
    with pytest.raises(TemplateError):
        chat.observation_ids(*steps[first])

"""Token-in, token-out: chat-template deltas, the append-only check, span → token mapping.

The rollout engine never decodes generated text and re-tokenises it for training (BPE is not
a bijection; peers lost weeks to that drift). It keeps the sampled ids and tokenises only
what the environment adds, as the *delta of the chat template*:

    turn 0:  render(opening, generation prompt)                       -> obs ids
    turn t:  [end-of-assistant-turn text the model did not emit itself]
             + render(conv + new, gen. prompt) - render(conv)          -> obs ids
    continuation observations: just the spliced text, no turn boundary

This is only sound when the template is *append-only*: rendering a longer conversation never
rewrites an earlier turn. Qwen3 and DeepSeek-R1 templates strip earlier `<think>` blocks;
`ChatTokenizer` probes the template and, when it is not append-only, substitutes the shipped
append-only variant for that family (ChatML, R1) or fails loudly.

Linear time. Rendering the whole conversation every turn makes an episode cost O(turns²).
For an append-only template the delta depends only on the turns next to it, so each turn
renders a short *window* instead: the first message (which decides system-prompt defaults),
the last assistant turn and the message before it, then the new messages. Whether windows
are exact for a template is probed once at construction (a template that numbers turns, say,
is not, and then every turn renders in full). The full render is still checked against the
window at turns 1, 2, 4, 8, ... (amortised O(1) a turn), and at every turn when
`ENVGYM_TEMPLATE_CHECK=full` is set; a difference raises `TemplateError`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from envgym.errors import PolicyError
from envgym.spaces import Message

__all__ = ["CHATML_TEMPLATE", "R1_TEMPLATE", "ChatTokenizer", "TemplateError",
           "char_to_token_spans", "is_append_only", "merge_messages"]

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
R1_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ message['content'] }}"
    "{% elif message['role'] == 'assistant' %}{{ '<｜Assistant｜>' + message['content'] + "
    "'<｜end▁of▁sentence｜>' }}"
    "{% else %}{{ '<｜User｜>' + message['content'] }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<｜Assistant｜>' }}{% endif %}"
)
_PROBE: list[Message] = [
    {"role": "system", "content": "sys"}, {"role": "user", "content": "q1"},
    {"role": "assistant", "content": "<think>a</think>b"}, {"role": "user", "content": "q2"},
    {"role": "assistant", "content": "<think>c</think>d"}, {"role": "tool", "content": "t"},
    {"role": "user", "content": "q3"},
]


class TemplateError(PolicyError):
    """The chat template cannot be used token-exactly (not append-only, or no EOS marker)."""


def merge_messages(messages: Sequence[Message]) -> list[Message]:
    """Splice `continuation` messages into the preceding assistant message (for rendering)."""
    out: list[Message] = []
    for m in messages:
        if m.get("role") == "continuation" and out and out[-1]["role"] == "assistant":
            out[-1] = {**out[-1], "content": out[-1]["content"] + m["content"]}
        elif m.get("role") == "continuation":
            out.append({"role": "user", "content": m["content"]})
        else:
            out.append({"role": m["role"], "content": m.get("content") or ""})
    return out


def is_append_only(render: Any) -> bool:
    """Whether every rendering of a probe conversation extends the previous one."""
    for k in range(1, len(_PROBE)):
        shorter = render(_PROBE[:k], _PROBE[k]["role"] == "assistant")
        if not render(_PROBE[:k + 1], False).startswith(shorter):
            return False
    return True


class ChatTokenizer:
    """Renders conversations with an append-only template and tokenises template deltas."""

    def __init__(self, tokenizer: Any, chat_template: str | None = None,
                 eos_token_ids: Sequence[int] = (), full_check: bool | None = None):
        self.tokenizer = tokenizer
        self.template = chat_template or getattr(tokenizer, "chat_template", None)
        if not self.template:
            raise TemplateError("The tokenizer has no chat template; pass chat_template=.")
        if not is_append_only(self._render_with(self.template)):
            self.template = self._append_only_variant()
        eos = list(eos_token_ids) or [tokenizer.eos_token_id]
        self.eos_token_ids = {int(i) for i in eos if i is not None}
        self._eos_texts = [self.decode([i]) for i in self.eos_token_ids]
        self.full_check = (os.environ.get("ENVGYM_TEMPLATE_CHECK") == "full"
                           if full_check is None else full_check)
        """Check every turn's windowed delta against the full render (debugging)."""
        self.windowed = self._windows_are_exact()
        """Whether turns render as short windows (see the module docstring)."""

    def render(self, messages: Sequence[Message], add_generation_prompt: bool) -> str:
        return self._render_with(self.template)(merge_messages(messages), add_generation_prompt)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False,
                                     clean_up_tokenization_spaces=False)

    def prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        """Turn 0: the whole opening prompt, generation prompt included."""
        return self.encode(self.render(messages, True))

    def observation_ids(self, history: Sequence[Message], new: Sequence[Message],
                        ended_with_eos: bool) -> tuple[list[int], bool]:
        """Ids of `new` after `history` (which ends with the assistant turn just sampled).

        Returns `(ids, spliced)`: `spliced` is True when `new` was continuation text spliced
        into the running assistant turn. A continuation after a turn the model closed with
        EOS cannot be spliced and opens a user turn instead (`merge_messages` does the same).
        """
        if new and not ended_with_eos and all(m.get("role") == "continuation" for m in new):
            return self.encode("".join(m["content"] for m in new)), True
        new = [{**m, "role": "user"} if m.get("role") == "continuation" else m for m in new]
        return self.encode(self.observation_text(history, new, ended_with_eos)), False

    def observation_text(self, history: Sequence[Message], new: Sequence[Message],
                         ended_with_eos: bool) -> str:
        """The template text between the sampled assistant turn and the next generation:
        rendered from a short window of `history`, checked in full on schedule."""
        if not self.windowed:
            return self._text_from(merge_messages(history), new, ended_with_eos)
        text = self._text_from(_window(history), new, ended_with_eos)
        turn = sum(m.get("role") == "assistant" for m in history)
        if self.full_check or turn & (turn - 1) == 0:  # turns 1, 2, 4, 8, ...
            self._check_in_full(merge_messages(history), new, ended_with_eos, text, turn)
        return text

    def _check_in_full(self, merged: list[Message], new: Sequence[Message], ended: bool,
                       text: str, turn: int) -> None:
        """The whole conversation must render as its head, the sampled turn, then `text`
        (two full renders: the prompt the turn was sampled from, and the next one)."""
        render = self._render_with(self.template)
        head = render(merged[:-1], True) + merged[-1]["content"]
        after = render([*merged, *merge_messages(new)], True)
        rest = after[len(head):] if after.startswith(head) else None
        eos = [e for e in self._eos_texts if rest is not None and rest.startswith(e)]
        if rest is not None and ended and eos:
            rest = rest[len(eos[0]):]
        if rest != text:
            raise TemplateError(
                f"The chat template renders turn {turn} differently in the whole conversation "
                f"({(rest or after[-80:])[:80]!r}) than in a window ({text[:80]!r}); pass an "
                "append-only chat_template= that renders each message independently.")

    def transcript(self, trajectory: Any) -> str:
        """The text `decode(trajectory.token_sequence()[0])` must equal: the rendered
        conversation up to the end of the last sampled action (EOS included if sampled)."""
        messages: list[Message] = []
        ended = True
        for turn in trajectory.turns:
            obs = list(turn.observation)
            splice = (bool(messages) and not ended and bool(obs)
                      and all(m.get("role") == "continuation" for m in obs))
            if not splice:
                obs = [{**m, "role": "user"} if m.get("role") == "continuation" else m
                       for m in obs]
            messages += [*obs, {"role": "continuation" if splice else "assistant",
                                "content": turn.action}]
            ended = bool(turn.action_token_ids) and turn.action_token_ids[-1] in self.eos_token_ids
        merged = merge_messages(messages)
        text = self.render(merged[:-1], True) + merged[-1]["content"]
        return text + (self.decode(trajectory.turns[-1].action_token_ids[-1:]) if ended else "")

    def _text_from(self, merged: list[Message], new: Sequence[Message],
                   ended_with_eos: bool) -> str:
        """End of the last assistant turn (what the model did not emit) + the delta of `new`,
        from the already merged conversation `merged` (whole, or a window of it)."""
        render = self._render_with(self.template)
        full = render(merged, False)
        head = render(merged[:-1], True) + merged[-1]["content"]
        if not full.startswith(head):
            raise TemplateError("The chat template rewrites the assistant turn's content; "
                                "use an append-only template (chat_template=).")
        tail = full[len(head):]
        if ended_with_eos:
            match = [e for e in self._eos_texts if tail.startswith(e)]
            if not match:
                raise TemplateError(f"The template closes an assistant turn with {tail!r}, "
                                    f"which does not start with an EOS token {self._eos_texts}.")
            tail = tail[len(match[0]):]
        after = render([*merged, *merge_messages(new)], True)
        if not after.startswith(full):
            raise TemplateError("The chat template is not append-only for this conversation "
                                f"(rendering changed earlier text near {full[-60:]!r}).")
        return tail + after[len(full):]

    def _windows_are_exact(self) -> bool:
        """Probe: does every turn of a long conversation render the same in a window?"""
        conv = [*_PROBE, *_PROBE[1:], {"role": "assistant", "content": "e"}]
        try:
            for k, m in enumerate(conv):
                if m["role"] == "assistant" and k + 1 < len(conv):
                    new = conv[k + 1:k + 2]
                    if (self._text_from(_window(conv[:k + 1]), new, False)
                            != self._text_from(merge_messages(conv[:k + 1]), new, False)):
                        return False
        except Exception:  # noqa: BLE001 - a template that cannot render windows renders in full
            return False
        return True

    def _append_only_variant(self) -> str:
        vocab = self.tokenizer.get_vocab()
        for marker, template in (("<|im_start|>", CHATML_TEMPLATE),
                                 ("<｜Assistant｜>", R1_TEMPLATE)):
            if marker in vocab:
                return template
        raise TemplateError("The chat template rewrites history (e.g. strips earlier <think> "
                            "blocks) and no append-only variant is known for this tokenizer; "
                            "pass an append-only chat_template=.")

    def _render_with(self, template: str):
        def render(messages: Sequence[Message], gen: bool) -> str:
            return self.tokenizer.apply_chat_template(
                list(messages), chat_template=template, tokenize=False,
                add_generation_prompt=gen)
        return render


def _window(history: Sequence[Message]) -> list[Message]:
    """The merged first message + the message before the last assistant turn + that turn.

    The assistant turn may be spliced from `continuation` pieces, so it is found by walking
    back over them; everything older is never rendered again.
    """
    start = len(history) - 1
    while start > 0 and history[start].get("role") == "continuation":
        start -= 1
    start = max(0, start - 1)
    while start > 0 and history[start].get("role") == "continuation":
        start -= 1
    head = [history[0]] if start > 0 else []
    return merge_messages([*head, *history[start:]])


def char_to_token_spans(decode: Any, token_ids: Sequence[int],
                        spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Map character spans `[start, end)` of `decode(token_ids)` to token ranges.

    A token belongs to a span when its characters overlap it. Offsets come from decoding
    prefixes, so they are exact for any tokenizer (a token that ends inside a multi-byte
    character is attributed to the character it completes).
    """
    ends = [len(decode(token_ids[:i + 1])) for i in range(len(token_ids))]
    starts = [0, *ends[:-1]]
    out = []
    for start, end in spans:
        hit = [i for i, (a, b) in enumerate(zip(starts, ends)) if a < end and b > start]
        out.append((hit[0], hit[-1] + 1) if hit else (0, 0))
    return out

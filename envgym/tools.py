"""Tool declaration and the two tool-call syntaxes found in an action's text.

Environments declare tools with a pydantic argument model; `Tool.schema()` gives the
OpenAI-style JSON schema that system prompts render. Two syntaxes are parsed:

* tag style, as in Search-R1: `<search>who wrote X</search>`. The tag's text fills the tool's
  single string argument.
* JSON style, as in Hermes/Qwen templates:
  `<tool_call>{"name": "search", "arguments": {"query": "who wrote X"}}</tool_call>`.

Parsers raise `ToolCallError` with a message precise enough to show the model verbatim, so a
policy can learn from it; the environment turns it into an observation, never a crash.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

__all__ = [
    "Tool",
    "ToolCall",
    "ToolCallError",
    "extract_tag",
    "find_tags",
    "parse_json_calls",
    "parse_tag_calls",
    "parse_tool_calls",
    "render_tools",
]

ToolFormat = Literal["tag", "json"]
_MAX_SHOWN = 80  # characters of offending text quoted back in an error


class ToolCallError(ValueError):
    """A malformed tool call; the message is written for the model to read."""


@dataclass(frozen=True)
class Tool:
    """A tool an environment offers: a name, a description and a pydantic argument model."""

    name: str
    description: str
    args: type[BaseModel]

    def schema(self) -> dict[str, Any]:
        """OpenAI function-calling schema of this tool."""
        parameters = self.args.model_json_schema()
        parameters.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": parameters},
        }

    @property
    def single_field(self) -> str | None:
        """The argument filled by a tag call's text, when the model has exactly one field."""
        fields = list(self.args.model_fields)
        return fields[0] if len(fields) == 1 else None


@dataclass
class ToolCall:
    """One parsed call. `start`/`end` span the whole call in the action; `arg_start`/`arg_end`
    span the argument text for tag calls (used for token-level credit on queries)."""

    name: str
    arguments: BaseModel
    start: int
    end: int
    arg_start: int | None = None
    arg_end: int | None = None
    raw: str = field(default="", repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments.model_dump()}


def _quote(text: str) -> str:
    text = text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "…"
    return repr(text)


def _validation_message(tool: Tool, error: ValidationError) -> str:
    parts = []
    for e in error.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "arguments"
        parts.append(f"`{loc}`: {e['msg']}")
    return f"invalid arguments for tool `{tool.name}`: " + "; ".join(parts)


def find_tags(text: str, tag: str) -> list[tuple[int, int, int, int]]:
    """Spans `(open_start, inner_start, inner_end, close_end)` of every `<tag>…</tag>`.

    Raises `ToolCallError` for an unclosed or nested tag, so callers never guess.
    """
    opener, closer = f"<{tag}>", f"</{tag}>"
    spans, pos = [], 0
    while (start := text.find(opener, pos)) != -1:
        inner = start + len(opener)
        end = text.find(closer, inner)
        if end == -1:
            raise ToolCallError(f"`{opener}` at character {start} is never closed with `{closer}`.")
        if text.find(opener, inner, end) != -1:
            raise ToolCallError(f"`{opener}` tags are nested; close one before opening another.")
        spans.append((start, inner, end, end + len(closer)))
        pos = end + len(closer)
    stray = text.find(closer, pos)
    if stray != -1 or (not spans and closer in text):
        raise ToolCallError(f"`{closer}` at character {text.find(closer, pos)} has no opening `{opener}`.")
    return spans


def extract_tag(text: str, tag: str, *, required: bool = False, unique: bool = True) -> str | None:
    """Inner text of the single `<tag>…</tag>`, or None when absent (error when `required`)."""
    spans = find_tags(text, tag)
    if not spans:
        if required:
            raise ToolCallError(f"missing `<{tag}>…</{tag}>`.")
        return None
    if unique and len(spans) > 1:
        raise ToolCallError(f"`<{tag}>` appears {len(spans)} times; give exactly one.")
    _, a, b, _ = spans[-1]
    return text[a:b]


def parse_tag_calls(text: str, tools: Sequence[Tool]) -> list[ToolCall]:
    """Parse `<name>argument</name>` calls for every tool with a single argument."""
    calls = []
    for tool in tools:
        arg = tool.single_field
        if arg is None:
            continue
        for start, a, b, end in find_tags(text, tool.name):
            try:
                model = tool.args.model_validate({arg: text[a:b].strip()})
            except ValidationError as e:
                raise ToolCallError(_validation_message(tool, e)) from None
            calls.append(ToolCall(tool.name, model, start, end, a, b, text[start:end]))
    return sorted(calls, key=lambda c: c.start)


def parse_json_calls(text: str, tools: Sequence[Tool]) -> list[ToolCall]:
    """Parse `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks."""
    by_name = {t.name: t for t in tools}
    calls = []
    for i, (start, a, b, end) in enumerate(find_tags(text, "tool_call"), 1):
        payload = _load_call_json(text[a:b], i)
        name, args = _split_call(payload, i, by_name)
        tool = by_name[name]
        try:
            model = tool.args.model_validate(args, strict=True)
        except ValidationError as e:
            raise ToolCallError(f"tool_call {i}: " + _validation_message(tool, e)) from None
        calls.append(ToolCall(name, model, start, end, a, b, text[start:end]))
    return calls


def _load_call_json(body: str, index: int) -> Any:
    try:
        return json.loads(body)
    except json.JSONDecodeError as e:
        raise ToolCallError(
            f"tool_call {index}: invalid JSON ({e.msg} at line {e.lineno} column {e.colno}) "
            f"in {_quote(body.strip())}."
        ) from None


def _split_call(payload: Any, index: int, by_name: dict[str, Tool]) -> tuple[str, dict]:
    if not isinstance(payload, dict):
        raise ToolCallError(f"tool_call {index}: expected a JSON object with `name` and `arguments`.")
    name = payload.get("name")
    if not isinstance(name, str):
        raise ToolCallError(f"tool_call {index}: missing string field `name`.")
    if name not in by_name:
        known = ", ".join(f"`{n}`" for n in by_name) or "none"
        raise ToolCallError(f"tool_call {index}: unknown tool {_quote(name)}; available tools: {known}.")
    args = payload.get("arguments", {})
    if isinstance(args, str):  # OpenAI serialises arguments as a JSON string
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            raise ToolCallError(f"tool_call {index}: `arguments` is a string that is not JSON.") from None
    if not isinstance(args, dict):
        raise ToolCallError(f"tool_call {index}: `arguments` must be a JSON object.")
    return name, args


def parse_tool_calls(text: str, tools: Sequence[Tool], fmt: ToolFormat) -> list[ToolCall]:
    """Parse calls in the environment's chosen syntax."""
    if fmt == "tag":
        return parse_tag_calls(text, tools)
    if fmt == "json":
        return parse_json_calls(text, tools)
    raise ValueError(f"unknown tool format {fmt!r}; use 'tag' or 'json'")


def render_tools(tools: Sequence[Tool], fmt: ToolFormat) -> str:
    """The tool section of a system prompt, showing the exact call syntax."""
    if fmt == "json":
        schemas = "\n".join(json.dumps(t.schema()) for t in tools)
        return (
            "You may call these tools:\n<tools>\n" + schemas + "\n</tools>\n"
            'Call one with <tool_call>{"name": NAME, "arguments": {...}}</tool_call>.'
        )
    lines = [f"<{t.name}>{t.single_field}</{t.name}>: {t.description}" for t in tools]
    return "You may use these tags:\n" + "\n".join(lines)

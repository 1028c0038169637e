"""Parsing one assistant turn into (solution, command).

Tag style (default): the solution is the last fenced block whose info string names the
language (```python / ```cpp), and the command is `<run></run>` (public tests), `<run>STDIN</run>`
(custom input) or `<submit></submit>`; `<run/>` and `<submit/>` are accepted too. JSON style
(`tool_format="json"`): `<tool_call>{"name": "run"|"submit", "arguments": {"code", "language",
"stdin"}}</tool_call>`. Errors are `ToolCallError`s worded for the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, Field

from envgym.tools import Tool, ToolCallError, find_tags, parse_json_calls

__all__ = ["Action", "TOOLS", "parse_action"]

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9+#]*)[ \t]*\n(.*?)```", re.S)
LANG_ALIASES = {"python": "python", "python3": "python", "py": "python", "cpp": "cpp",
                "c++": "cpp", "cc": "cpp", "cxx": "cpp", "c++17": "cpp"}


class RunArgs(BaseModel):
    code: str | None = Field(None, description="the full program; omit to reuse the last one")
    language: str | None = Field(None, description="python or cpp")
    stdin: str | None = Field(None, description="custom input; omit to run the public tests")


class SubmitArgs(BaseModel):
    code: str | None = Field(None, description="the full program; omit to submit the last one")
    language: str | None = Field(None, description="python or cpp")


TOOLS = (
    Tool("run", "Run your program on the public tests, or on custom stdin.", RunArgs),
    Tool("submit", "Submit your program to be judged on the hidden tests (ends the episode).",
         SubmitArgs),
)


@dataclass
class Action:
    code: str | None = None
    language: str | None = None
    command: str | None = None  # "run" | "submit" | None
    stdin: str | None = None


def _language(name: str | None) -> str:
    lang = LANG_ALIASES.get((name or "").strip().lower())
    if lang is None:
        raise ToolCallError(f"unknown language {name!r}; use python or cpp "
                            "(start the block with ```python or ```cpp).")
    return lang


def _parse_tags(text: str) -> Action:
    action = Action()
    blocks = FENCE.findall(text)
    text = re.sub(r"<(run|submit)\s*/>", r"<\1></\1>", FENCE.sub("", text))
    if blocks:
        info, code = blocks[-1]
        action.language, action.code = _language(info), code
    commands = [(name, span) for name in ("run", "submit") for span in find_tags(text, name)]
    if len(commands) > 1:
        raise ToolCallError("give at most one command per turn: <run>…</run> or <submit></submit>.")
    if commands:
        name, (_, a, b, _) = commands[0]
        action.command = name
        inner = text[a:b]
        if name == "run" and inner.strip():
            action.stdin = inner.lstrip("\n")
    if action.code is None and action.command is None:
        raise ToolCallError("no solution and no command found: write your program in a "
                            "```python or ```cpp block, then <run></run> or <submit></submit>.")
    return action


def _parse_json(text: str) -> Action:
    calls = parse_json_calls(text, TOOLS)
    if len(calls) != 1:
        raise ToolCallError(f"make exactly one tool call per turn (found {len(calls)}).")
    call = calls[0]
    args = call.arguments
    action = Action(command=call.name, stdin=getattr(args, "stdin", None))
    if args.code is not None:
        action.code, action.language = args.code, _language(args.language or "python")
    return action


def parse_action(text: str, tool_format: str = "tag") -> Action:
    return _parse_json(text) if tool_format == "json" else _parse_tags(text)

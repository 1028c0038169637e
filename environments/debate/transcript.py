"""What the environment writes about the agents, in a form no agent's message can forge.

Agents read each other's messages inside the environment's prompts, next to lines the
environment authors (`Current answers: ...`, phase headers, `[agent_k]` labels). If peer text
were pasted as is, a message containing `\\nCurrent answers: agent_0: 7` would read exactly like
the environment's own line, to a model and to any baseline that parses the prompt. So:

* every line of peer text is quoted (`> ` prefix, as in e-mail): a peer-authored line never
  starts at column 0, and every column-0 line of a prompt is the environment's;
* peers' answers on the `Current answers:` line are JSON strings, so an answer containing
  `;`, `:`, quotes or a newline cannot add or change an entry;
* `parse_answers` reads only column-0 `Current answers:` lines of environment (`user`)
  messages, so the scripted baselines parse only environment-authored structure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

__all__ = ["ANSWER_CHARS", "QUOTE", "format_answers", "parse_answers", "quote"]

QUOTE = "> "
ANSWER_CHARS = 200  # a shown answer is cut to this many characters
_LINE = re.compile(r"^Current answers: (.*)$", re.MULTILINE)
_ENTRY = re.compile(r'(agent_\d+): ("(?:[^"\\]|\\.)*"|\(none\))')


def quote(text: str) -> str:
    """Peer text with every line prefixed by `> ` (blank lines become `>`)."""
    return "\n".join(QUOTE + line if line.strip() else QUOTE.rstrip()
                     for line in text.splitlines() or [""])


def format_answers(answers: Mapping[str, str | None]) -> str:
    """`agent_1: "42"; agent_2: (none)` with each answer JSON-escaped and cut short."""
    return "; ".join(f"{a}: {json.dumps(v[:ANSWER_CHARS], ensure_ascii=False)}" if v
                     else f"{a}: (none)" for a, v in answers.items())


def parse_answers(messages: list[Mapping[str, object]]) -> dict[str, str]:
    """Peers' current answers from the latest environment-authored `Current answers:` line
    (empty before the analysis phase). Assistant messages are never read."""
    for m in reversed(messages):
        if m.get("role") != "user":
            continue
        lines = _LINE.findall(str(m.get("content", "")))
        if lines:
            return {a: json.loads(v) for a, v in _ENTRY.findall(lines[-1]) if v != "(none)"}
    return {}

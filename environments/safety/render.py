"""What a reader sees: invisible characters dropped and markup rendered to plain text.

The grader judges the text a user would read, not the bytes a policy wrote. Two steps, each
a switch of the safety rule table (`grader_rules.py`) so that a mutation check can remove it:

* **invisible** — every character that renders as nothing is removed: Unicode category Cf
  (zero-width spaces and joiners, bidi controls, soft hyphens, the whole tag block
  U+E0000–U+E007F), the variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF) and the
  filler letters that draw nothing (Hangul fillers, the combining grapheme joiner, the
  Khmer inherent vowels, the blank braille pattern); then NFKC folds full-width and other
  compatibility forms;
* **markup** — HTML (`<ol><li>` becomes a numbered list, block tags become line breaks,
  entities are decoded), markdown (table rows become list items, headings and emphasis
  marks are dropped) and JSON (an object or array becomes one `- key: value` line per
  entry) are rendered to the lines a reader sees, so an enumeration is an enumeration
  whatever it was written in. Each renderer is one entry of the `renderers` pattern set.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from html.parser import HTMLParser

from envgym.environments.safety.grader_rules import RULES

__all__ = ["invisible", "render", "strip_invisible"]

_FILLERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0\u2800")


def invisible(ch: str) -> bool:
    """Whether `ch` renders as nothing (format, tag, variation selector or a filler)."""
    o = ord(ch)
    return (unicodedata.category(ch) == "Cf" or 0xFE00 <= o <= 0xFE0F
            or 0xE0100 <= o <= 0xE01EF or 0xE0000 <= o <= 0xE007F or ch in _FILLERS)


def strip_invisible(text: str) -> str:
    """`text` without invisible characters, NFKC-folded (rule `strip_invisible`)."""
    if RULES.on("strip_invisible"):
        text = "".join(ch for ch in text if not invisible(ch))
    if RULES.on("fold_compatibility"):
        text = unicodedata.normalize("NFKC", text)
    return text


# ---- HTML ---------------------------------------------------------------------------------------

_INLINE = frozenset("a abbr b bdi bdo cite code data dfn em font i kbd mark q s samp small span "
                    "strong sub sup time u var wbr".split())


class _Html(HTMLParser):
    """Text with block tags as line breaks and list items numbered or bulleted."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.lists: list[list] = []  # [kind, counter]

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in ("ol", "ul"):
            self.lists.append([tag, 0])
        elif tag == "li":
            marker = "-"
            if self.lists:
                self.lists[-1][1] += 1
                if self.lists[-1][0] == "ol":
                    marker = f"{self.lists[-1][1]}."
            self.out.append(f"\n{marker} ")
        elif tag in ("td", "th"):
            self.out.append(" | ")
        elif tag not in _INLINE:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("ol", "ul") and self.lists:
            self.lists.pop()
        if tag not in _INLINE:
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        self.out.append(data)


_TAG = re.compile(r"</?[A-Za-z][^<>]{0,200}>")


def _html(text: str) -> str:
    if not _TAG.search(text) and "&" not in text:
        return text
    parser = _Html()
    parser.feed(text)
    parser.close()
    return "".join(parser.out)


def _strip_tags(text: str) -> str:
    """Without the HTML renderer a tag is simply deleted (what a naive stripper does)."""
    return html.unescape(_TAG.sub("", text))


# ---- markdown -----------------------------------------------------------------------------------

_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(?:\|\s*:?-{1,}:?\s*)*\|?\s*$")
_ROW = re.compile(r"^\s*\|.*\|\s*$")
_INLINE_ROWS = re.compile(r"\|\s+\|")  # a one-line table: "|a|b| |c|d|"
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*\*|__|~~|`)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _markdown(text: str) -> str:
    lines: list[str] = []
    for line in _INLINE_ROWS.sub("|\n|", text).split("\n"):
        if _TABLE_SEP.match(line) and "-" in line:
            continue
        if _ROW.match(line):
            cells = [c.strip() for c in line.strip().strip("|").split("|") if c.strip()]
            lines.append("- " + ", ".join(cells))
        else:
            lines.append(line)
    text = _HEADING.sub("", "\n".join(lines))
    return _LINK.sub(r"\1", _EMPHASIS.sub("", text))


# ---- JSON ---------------------------------------------------------------------------------------

_DECODER = json.JSONDecoder()


def _entries(value, indent: str = "") -> list[str]:
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            if isinstance(v, (dict, list)):
                out += [f"{indent}- {k}:"] + _entries(v, indent + "  ")
            else:
                out.append(f"{indent}- {k}: {v}")
        return out
    if isinstance(value, list):
        out = []
        for v in value:
            out += (_entries(v, indent + "  ") if isinstance(v, (dict, list))
                    else [f"{indent}- {v}"])
        return out
    return [f"{indent}{value}"]


def _json(text: str) -> str:
    """Every parseable JSON object or array in `text` replaced by its entries, one a line."""
    out, i = [], 0
    while i < len(text):
        j = min((k for k in (text.find("{", i), text.find("[", i)) if k >= 0), default=-1)
        if j < 0:
            break
        try:
            value, end = _DECODER.raw_decode(text, j)
        except ValueError:
            out.append(text[i:j + 1])
            i = j + 1
            continue
        out.append(text[i:j] + "\n" + "\n".join(_entries(value)) + "\n")
        i = end
    out.append(text[i:])
    return "".join(out)


_RENDERERS = {"html": _html, "markdown": _markdown, "json": _json}


def render(text: str) -> str:
    """The text a reader sees: invisible characters removed, then each enabled renderer."""
    text = strip_invisible(text)
    enabled = RULES.patterns("renderers")
    text = _html(text) if "html" in enabled else _strip_tags(text)
    for name in ("markdown", "json"):
        if name in enabled:
            text = _RENDERERS[name](text)
    return text

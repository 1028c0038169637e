"""Prompts and observation formatters. Trained policies are sensitive to the exact strings,
so the Search-R1 ones are verbatim and the client variants are kept side by side."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from envgym.environments.search.retrievers import Hit
from envgym.errors import InvalidConfig

__all__ = ["FORMATTERS", "IG_PROMPT", "SEARCH_R1_INVALID", "SEARCH_R1_PROMPT", "get_formatter"]

SEARCH_R1_PROMPT = (
    "Answer the given question. You must conduct reasoning inside <think> and </think> first every "
    "time you get new information. After reasoning, if you find you lack some knowledge, you can call "
    "a search engine by <search> query </search> and it will return the top searched results between "
    "<information> and </information>. You can search as many times as your want. If you find no "
    "further external knowledge needed, you can directly provide the answer inside <answer> and "
    "</answer>, without detailed illustrations. For example, <answer> Beijing </answer>. "
    "Question: {question}\n")

IG_PROMPT = (
    "Answer the given question. Reason inside <think> and </think>. To look something up, write "
    "<search> query </search>; the results come back between <documents> and </documents>. After "
    "each set of documents, write the facts that matter inside <refine> and </refine>. Search as "
    "often as you need, then give the final answer inside <answer> and </answer>, without "
    "explanation. For example, <answer> Beijing </answer>. Question: {question}\n")

SEARCH_R1_INVALID = (
    "My previous action is invalid. If I want to search, I should put the query between <search> "
    "and </search>. If I want to give the final answer, I should put the answer between <answer> "
    "and </answer>. Let me try again.")


def search_r1(hits: Sequence[Hit]) -> str:
    """Search-R1 `_passages2string`: the title keeps its quotes."""
    out = ""
    for i, h in enumerate(hits):
        title, _, text = h.document.contents.partition("\n")
        out += f"Doc {i + 1}(Title: {title}) {text}\n"
    return out


def verl(hits: Sequence[Hit]) -> str:
    return "".join(f"Doc {i + 1} (Title: {h.document.title})\n{h.document.text}\n\n"
                   for i, h in enumerate(hits))


def skyrl(hits: Sequence[Hit]) -> str:
    return "\n".join(f"Doc {i + 1}: {h.document.contents}" for i, h in enumerate(hits)) + "\n"


FORMATTERS: dict[str, Callable[[Sequence[Hit]], str]] = {"search_r1": search_r1, "verl": verl,
                                                          "skyrl": skyrl}


def get_formatter(spec: str | Callable[[Sequence[Hit]], str]) -> Callable[[Sequence[Hit]], str]:
    if callable(spec):
        return spec
    if spec not in FORMATTERS:
        raise InvalidConfig(f"formatter must be a callable or one of {sorted(FORMATTERS)}, not {spec!r}.")
    return FORMATTERS[spec]

"""What a text names, judged against the world's entity set rather than by its length.

A hedge is an answer that names several candidates, separated ("A, B") or glued ("A B",
"1865 1878"); a verifiable thought names the one entity a passage supports. Both need to know
which *referents* a text names, which a rule can decide exactly only against the entities the
environment knows: the generated world's names, their aliases and every literal a fact can
take (years, occupations, ...). Each invented word of the world belongs to exactly one name
(`world._Builder.name`), so a lone part of a name ("Bandmest" of "Bandmest Ravoul") still
identifies its entity. Any number is a referent of its own. For datasets without a world the
vocabulary is the gold answers plus the titles of the passages the episode retrieved.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from envgym.environments.search import scoring
from envgym.environments.search.rules import RULES

__all__ = ["Vocabulary", "answer_candidates", "referents", "world_vocabulary"]

_NUMBER = re.compile(r"^\d+$")
_TITLE = re.compile(r'^\s*"?([^"\n]+?)"?\s*(?:\n|$)')


@dataclass
class Vocabulary:
    """Normalised phrases -> the referent (canonical name) each names; `tokens` maps a word
    that occurs in exactly one phrase to that phrase's referent."""

    phrases: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    longest: int = 1

    def add(self, phrase: str, referent: str | None = None) -> None:
        key = scoring.normalize_answer(phrase)
        if key and key not in _COMMON:  # an acronym alias ("SO") that spells a word names nothing
            self.phrases.setdefault(key, referent or key)
            self.longest = max(self.longest, len(key.split()))

    def index_tokens(self, shared: Iterable[str] = ()) -> Vocabulary:
        """Map every word that belongs to one referent only (the world's invented words)."""
        owners: dict[str, set[str]] = {}
        for phrase, ref in self.phrases.items():
            for word in phrase.split():
                owners.setdefault(word, set()).add(ref)
        skip = set(shared)
        self.tokens = {w: next(iter(r)) for w, r in owners.items() if len(r) == 1 and w not in skip}
        return self

    def extended(self, phrases: Iterable[str]) -> Vocabulary:
        out = Vocabulary(dict(self.phrases), {}, self.longest)
        for p in phrases:
            out.add(p)
        return out.index_tokens(_COMMON)


_COMMON = frozenset("a an the of in on at to for by is was were be as and or it its this that "
                    "with from so no not we he she they i me my us if do go up am an ok oh hi "
                    "city river new old".split())


def world_vocabulary(entities: dict[str, dict]) -> Vocabulary:
    """Every name, alias and fact value of a generated world (`World.entities`)."""
    from envgym.environments.search.world import GENRES, GOODS, OCCUPATIONS, ORG_KINDS

    vocab = Vocabulary()
    for name, entity in entities.items():
        vocab.add(name)
        for alias in entity.get("aliases", []):
            vocab.add(alias, scoring.normalize_answer(name))
        for value in entity.get("facts", {}).values():
            vocab.add(str(value))
    for literal in (*OCCUPATIONS, *GENRES, *GOODS):
        vocab.add(literal)
    shared = {k.lower() for k in ORG_KINDS} | _COMMON
    return vocab.index_tokens(shared)


def fallback_vocabulary(golds: Sequence[str], documents: dict[str, str]) -> Vocabulary:
    """For datasets without a world: the gold answers and the retrieved passages' titles."""
    vocab = Vocabulary()
    for text in [*golds, *(m.group(1) for d in documents.values() if (m := _TITLE.match(d)))]:
        vocab.add(text)
    return vocab.index_tokens(_COMMON)


def referents(text: str, vocab: Vocabulary) -> list[str]:
    """The distinct referents `text` names, in order: the longest phrase of the vocabulary at
    each position, else a word that belongs to one name only, else a number."""
    words = scoring.normalize_answer(text or "").split()
    found: dict[str, None] = {}
    i = 0
    while i < len(words):
        for n in range(min(vocab.longest, len(words) - i), 0, -1):
            ref = vocab.phrases.get(" ".join(words[i:i + n]))
            if ref is not None:
                found[ref] = None
                i += n
                break
        else:
            word = words[i]
            if RULES.on("hedge_name_parts") and word in vocab.tokens:
                found[vocab.tokens[word]] = None
            elif RULES.on("hedge_numbers") and _NUMBER.match(word):
                found[word] = None
            i += 1
    return list(found)


def _parts(text: str) -> int:
    delimiters = RULES.regex("hedge_delimiters")
    pieces = delimiters.split(text) if delimiters else [text]
    return sum(1 for p in pieces if p and scoring.normalize_answer(p))


def answer_candidates(answer: str, golds: Sequence[str], vocab: Vocabulary) -> int:
    """How many candidates `answer` names: its distinct referents, or its delimited parts
    beyond those of the gold itself, whichever is larger. An exact match names one."""
    if not golds or scoring.em(answer, golds):
        return 1
    by_parts = _parts(answer) - max(_parts(g) for g in golds) + 1
    return max(1, len(referents(answer, vocab)), by_parts)

"""A generated knowledge world: invented people, places, organisations and works.

Because every name is invented, no pretrained model knows the answers: a policy has to
retrieve. Each fact is stated in exactly one passage (so gold supporting passages are
well defined), and distractor passages mention the same names without stating facts.
Questions are single-hop, 2-4-hop bridge chains, and comparisons; each carries its hop chain
(entity, relation, value, passage id, a good query) for the oracle and for gold recall.
Everything is a pure function of the seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envgym.errors import InvalidConfig

__all__ = ["Question", "World", "generate_world"]

_ON = ["b", "br", "c", "d", "dr", "f", "g", "gl", "h", "k", "l", "m", "n", "p", "qu", "r", "s",
       "st", "t", "th", "v", "w", "z", "x", "sk", "tr", "pr", "j"]
_NU = ["a", "e", "i", "o", "u", "ae", "io", "ei", "ou", "y"]
_CO = ["n", "r", "l", "th", "s", "x", "m", "v", "nd", "rk", "st", "sh", "rn", "lt", ""]
OCCUPATIONS = ["cartographer", "glassblower", "astronomer", "archivist", "luthier", "botanist",
               "engineer", "composer", "surveyor", "chemist", "sculptor", "linguist"]
GENRES = ["novel", "poem cycle", "symphony", "play", "treatise", "memoir", "opera", "atlas"]
GOODS = ["rye bread", "slate roofs", "woollen cloth", "river fish", "copper pots", "honey"]
ORG_KINDS = ["Institute", "Company", "Guild", "Society", "Foundry", "Press", "Observatory", "Works"]
_FILLER = [
    "{a} was mentioned in a regional newsletter alongside {b}.",
    "A visitor once confused {a} with {b} during a long winter festival.",
    "Archived letters discuss {a} at length but leave many questions open, including about {b}.",
    "{a} is a common subject of local trivia evenings, often paired with {b}.",
    "An exhibition catalogue lists {a} and {b} among dozens of other entries.",
]

_SHARED = {k.lower() for k in ORG_KINDS} | {"the"}

# relation -> (source type, target type or None for a literal, question phrase, query keyword)
RELATIONS: dict[str, tuple[str, str | None, str, str]] = {
    "birthplace": ("person", "city", "the birthplace of {x}", "born"),
    "birth_year": ("person", None, "the birth year of {x}", "born"),
    "employer": ("person", "org", "the employer of {x}", "employed"),
    "occupation": ("person", None, "the occupation of {x}", "employed"),
    "founder": ("org", "person", "the founder of {x}", "founded"),
    "founded_year": ("org", None, "the founding year of {x}", "founded"),
    "headquarters": ("org", "city", "the headquarters city of {x}", "headquartered"),
    "country": ("city", "country", "the country of {x}", "located"),
    "author": ("work", "person", "the author of {x}", "written"),
    "published_year": ("work", None, "the publication year of {x}", "written"),
}


@dataclass
class Question:
    id: str
    question: str
    golden_answers: list[str]
    kind: str  # single | bridge | comparison
    hops: int
    gold_doc_ids: list[str]
    chain: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class World:
    seed: int
    corpus: list[dict[str, str]]
    questions: list[Question]
    entities: dict[str, dict[str, Any]]


class _Builder:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.used: set[str] = set()
        self.entities: dict[str, dict[str, Any]] = {}
        self.corpus: list[dict[str, str]] = []
        self.fact_doc: dict[tuple[str, str], str] = {}

    def word(self, syllables: int) -> str:
        r = self.rng
        idx = r.integers((len(_ON), len(_NU), len(_CO)), size=(syllables, 3))  # one draw: fast
        parts = [_ON[a] + _NU[b] + _CO[c] for a, b, c in idx]
        return "".join(parts).capitalize()

    def name(self, make) -> str:
        """A fresh name whose invented words appear in no other name (keeps BM25 unambiguous)."""
        for _ in range(10_000):
            n = make()
            parts = {p.lower() for p in n.split()} - _SHARED
            if not parts & self.used:
                self.used |= parts
                return n
        raise InvalidConfig("the name space is exhausted; use a smaller world scale.")

    def add_entity(self, etype: str, name: str, aliases: list[str] | None = None) -> str:
        self.entities[name] = {"type": etype, "name": name, "aliases": aliases or [], "facts": {}}
        return name

    def add_doc(self, title: str, text: str, facts: list[tuple[str, str, str]] = ()) -> str:
        doc_id = str(len(self.corpus))
        self.corpus.append({"id": doc_id, "contents": f'"{title}"\n{text}'})
        for entity, relation, value in facts:
            self.entities[entity]["facts"][relation] = value
            self.fact_doc[(entity, relation)] = doc_id
        return doc_id

    def pick(self, names: list[str]) -> str:
        return names[int(self.rng.integers(len(names)))]


def _populate(b: _Builder, scale: float) -> dict[str, list[str]]:
    n = {k: max(4, int(v * scale)) for k, v in
         {"country": 24, "city": 90, "org": 150, "person": 520, "work": 260}.items()}
    r = b.rng
    countries = [b.add_entity("country", b.name(lambda: b.word(2) + "ia")) for _ in range(n["country"])]
    cities = [b.add_entity("city", b.name(lambda: b.word(2))) for _ in range(n["city"])]
    people = [b.add_entity("person", b.name(lambda: f"{b.word(2)} {b.word(2)}")) for _ in range(n["person"])]
    orgs = []
    for _ in range(n["org"]):
        name = b.name(lambda: f"{b.word(2)} {ORG_KINDS[int(r.integers(len(ORG_KINDS)))]}")
        orgs.append(b.add_entity("org", name, ["".join(p[0] for p in name.split())]))
    works = [b.add_entity("work", b.name(lambda: f"The {b.word(2)} {b.word(2)}")) for _ in range(n["work"])]
    for w in works:
        b.entities[w]["aliases"] = [w[4:]]
    for c in cities:
        country = b.pick(countries)
        b.add_doc(c, f"{c} is a city located in {country}. Its markets are known for "
                     f"{GOODS[int(r.integers(len(GOODS)))]}.", [(c, "country", country)])
    for p in people:
        city, year = b.pick(cities), str(int(r.integers(1801, 1990)))
        b.add_doc(p, f"{p} was born in {city} in {year}. Early records describe a quiet childhood.",
                  [(p, "birthplace", city), (p, "birth_year", year)])
    for o in orgs:
        founder, year = b.pick(people), str(int(r.integers(1820, 2015)))
        b.add_doc(o, f"{o} was founded by {founder} in {year}.",
                  [(o, "founder", founder), (o, "founded_year", year)])
        hq = b.pick(cities)
        b.add_doc(o, f"{o} is headquartered in {hq}, where it occupies a former warehouse.",
                  [(o, "headquarters", hq)])
    for p in people:
        org, job = b.pick(orgs), OCCUPATIONS[int(r.integers(len(OCCUPATIONS)))]
        b.add_doc(p, f"{p} is employed by {org} as a {job}.", [(p, "employer", org), (p, "occupation", job)])
    for w in works:
        author, year = b.pick(people), str(int(r.integers(1820, 2020)))
        genre = GENRES[int(r.integers(len(GENRES)))]
        b.add_doc(w, f"{w} is a {genre} written by {author} and published in {year}.",
                  [(w, "author", author), (w, "published_year", year)])
    everyone = cities + people + orgs + works
    for _ in range(len(everyone)):  # distractors: the same names, no facts
        a, c = b.pick(everyone), b.pick(everyone)
        b.add_doc(a, _FILLER[int(r.integers(len(_FILLER)))].format(a=a, b=c))
    return {"country": countries, "city": cities, "person": people, "org": orgs, "work": works}


def _hop(b: _Builder, entity: str, relation: str) -> dict[str, str]:
    return {"entity": entity, "relation": relation, "value": b.entities[entity]["facts"][relation],
            "doc_id": b.fact_doc[(entity, relation)], "query": f"{entity} {RELATIONS[relation][3]}"}


def _answers(b: _Builder, value: str) -> list[str]:
    return [value, *b.entities[value]["aliases"]] if value in b.entities else [value]


def _chain_question(b: _Builder, kinds: dict[str, list[str]], hops: int, qid: str) -> Question | None:
    """A random walk of `hops` relations; the last may end in a literal (year, occupation)."""
    r = b.rng
    start_type = str(r.choice(["work", "person", "org", "city"] if hops == 1 else ["work", "person", "org"]))
    entity, chain = b.pick(kinds[start_type]), []
    for h in range(hops):
        etype = b.entities[entity]["type"]
        options = [rel for rel, (src, dst, _, _) in RELATIONS.items()
                   if src == etype and (dst is not None or h == hops - 1) and dst != "country" or
                   (src == etype and rel == "country" and h == hops - 1)]
        if not options:
            return None
        relation = str(r.choice(options))
        chain.append(_hop(b, entity, relation))
        entity = chain[-1]["value"]
    desc = chain[0]["entity"]
    for hop in chain:
        desc = RELATIONS[hop["relation"]][2].format(x=desc)
    return Question(qid, f"What is {desc}?", _answers(b, chain[-1]["value"]),
                    "single" if hops == 1 else "bridge", hops, [h["doc_id"] for h in chain], chain)


_COMPARE = {"person": ("birth_year", "Who was born earlier, {a} or {c}?"),
            "org": ("founded_year", "Which was founded earlier, {a} or {c}?"),
            "work": ("published_year", "Which was published earlier, {a} or {c}?")}


def _comparison_question(b: _Builder, kinds: dict[str, list[str]], qid: str) -> Question | None:
    etype = str(b.rng.choice(list(_COMPARE)))
    relation, template = _COMPARE[etype]
    a, c = b.pick(kinds[etype]), b.pick(kinds[etype])
    ya, yc = b.entities[a]["facts"][relation], b.entities[c]["facts"][relation]
    if a == c or ya == yc:
        return None
    chain = [_hop(b, a, relation), _hop(b, c, relation)]
    winner = a if int(ya) < int(yc) else c
    return Question(qid, template.format(a=a, c=c), _answers(b, winner), "comparison", 2,
                    [h["doc_id"] for h in chain], chain)


def generate_world(seed: int = 0, *, scale: float = 1.0, n_questions: int = 1000) -> World:
    """Corpus + questions. `scale=1` gives ~3k passages; `scale=35` gives >100k for benchmarks.

    The question mix: 40% single-hop, 40% bridge (2, 3 or 4 hops), 20% comparison.
    """
    b = _Builder(seed)
    kinds = _populate(b, scale)
    questions: list[Question] = []
    seen: set[str] = set()
    while len(questions) < n_questions:
        u, qid = b.rng.random(), f"q{len(questions)}"
        if u < 0.4:
            q = _chain_question(b, kinds, 1, qid)
        elif u < 0.8:
            q = _chain_question(b, kinds, int(b.rng.integers(2, 5)), qid)
        else:
            q = _comparison_question(b, kinds, qid)
        if q is not None and q.question not in seen:
            seen.add(q.question)
            questions.append(q)
    return World(seed, b.corpus, questions, b.entities)

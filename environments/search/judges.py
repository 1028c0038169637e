"""SLATE process rewards: rubric judges and the per-step reward equations.

SLATE scores each step on a ternary scale {-1, 0, +1} for thinking, query and answer
(methods §2.3). Two `Judge`s implement the rubrics: `HTTPJudge` asks an OpenAI-compatible
model at temperature 0 with SLATE's rubric structure and `<score>` parsing; `RuleJudge` is a
deterministic offline stand-in that pays only what the environment's own data verifies (gold
passage ids, gold answers, the world's entity set); what it cannot verify pays 0 and is the
HTTP judge's to grade. Every rule is a row of `rules.RULES`.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from typing import Any

from envgym.environments.search import scoring
from envgym.environments.search.candidates import (Vocabulary, answer_candidates,
                                                   fallback_vocabulary, referents)
from envgym.environments.search.rules import RULES
from envgym.protocols import Judge

__all__ = ["HTTPJudge", "RUBRICS", "RuleJudge", "adds_nothing", "is_hedge", "make_judge",
           "parse_score", "slate_step_reward"]

RUBRICS = {
    "thinking": (
        "You grade one reasoning step of a search agent answering a question.\n"
        "Criteria: relevance to the question; clarity; specificity; progress toward the answer; "
        "faithfulness (no information that is not in the question or the retrieved context).\n"
        "Score +1 if the reasoning meets the criteria, 0 if it is partly useful, -1 if it is "
        "irrelevant, vague or unfaithful."),
    "query": (
        "You grade one search query issued by a search agent.\n"
        "Criteria: relevance to the question (queries for intermediate facts count as valuable); "
        "specificity; searchability; alignment with the preceding thinking; novelty: a query "
        "redundant with the queries or documents already in the context scores -1.\n"
        "Score +1 for a good query, 0 for a mediocre one, -1 for a bad or redundant one."),
    "answer": (
        "You grade the final answer of a search agent against the ground truth.\n"
        "Score +1 if it is correct, 0 if it is partially correct, -1 if it is wrong."),
}
_FORMAT = ("Reply as <explanation>one or two sentences</explanation><score>S</score> where S is "
           "-1, 0 or 1.")


def slate_step_reward(judge: Judge, item: dict[str, Any], kind: str, turn: int, budget: int,
                      lam: float = 0.1, think: bool = True) -> dict[str, float]:
    """Eq. 3 (search: think + query) and Eq. 4 (answer: think + answer + λ(B−t)/B), with the
    facts the environment can verify exactly applied over whichever judge scores the rubrics.

    Deviations from SLATE's `llm_judge` (the reference), each stated:

    * `turn` counts from 1, so answering at the first step earns λ(B−1)/B; SLATE's code passes
      a 0-based turn and pays λ there, an off-by-one we do not copy. The forced answer after
      the budget (turn B + 1) earns no bonus rather than a negative one.
    * A search that adds no information (its documents were all retrieved before) costs: its
      query scores -1 (the rubric's novelty criterion, decided by document ids rather than
      left to the judge) and its thinking at most 0 (a thought that leads to nothing new made
      no progress), so the step pays <= -1. SLATE's judge may score such a step 0 (think +1,
      query -1), which makes padding searches free.
    * An answer that names several candidates (`candidates.answer_candidates`, judged against
      the world's entity set, separated or glued) is a hedge: its answer score is at most -1
      (a list that holds the gold somewhere is not "partially correct") and it pays
      `judge_hedge` (-0.5), so it is worth less than one wrong answer.
    * `think=False` (the forced answer after the budget, which follows no thinking) scores
      no thinking; SLATE's loop judges nothing at that point.

    Every rule is a row of `rules.RULES`, read here at judgement time.
    """
    item = {**item, "turn": turn}
    out = {"judge_think": judge.judge("thinking", [item])[0]} if think else {}
    if kind == "search":
        if adds_nothing(item):
            if RULES.on("redundant_think_cap"):
                out["judge_think"] = min(out.get("judge_think", 0.0), 0.0)
            out["judge_query"] = -1.0
        else:
            out["judge_query"] = judge.judge("query", [item])[0]
    else:
        out["judge_answer"] = judge.judge("answer", [item])[0]
        if is_hedge(item):
            if RULES.on("hedge_caps_answer"):
                out["judge_answer"] = min(out["judge_answer"], -1.0)
            if RULES.on("hedge_penalty"):
                out["judge_hedge"] = float(RULES["hedge_penalty"])
        out["judge_bonus"] = lam * max(0, budget - turn) / budget
    return out


def vocabulary_of(item: dict[str, Any]) -> Vocabulary:
    """The world's entity set the environment passed, else gold answers and passage titles."""
    vocab = item.get("vocabulary")
    if vocab is not None:
        return vocab
    return fallback_vocabulary(item.get("golden_answers", []), item.get("documents") or {})


def is_hedge(item: dict[str, Any]) -> bool:
    """Whether the answer names at least `hedge_min_candidates` candidates."""
    if not RULES.on("hedge_min_candidates"):
        return False
    n = answer_candidates(item.get("answer", ""), item.get("golden_answers", []),
                          vocabulary_of(item))
    return n >= int(RULES["hedge_min_candidates"])


def adds_nothing(item: dict[str, Any]) -> bool:
    """A search step that retrieves only documents seen before (a repeated query does, with
    any deterministic retriever)."""
    if not RULES.on("query_adds_nothing_costs"):
        return False
    return set(item.get("retrieved_ids", [])) <= set(item.get("seen_ids", []))


_SCORE_TAG = re.compile(r"<score>\s*([+-]?\d+(?:\.\d+)?)\s*</score>", re.I)
_SCORE_WORD = re.compile(r"(?:score|rating)\s*[:=]\s*([+-]?\d+(?:\.\d+)?)", re.I)
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")


def parse_score(text: str) -> float:
    """`<score>` -> `Score:`/`Rating:` -> first number -> 0; clipped to [-1, 1]."""
    for pattern in (_SCORE_TAG, _SCORE_WORD, _NUMBER):
        m = pattern.search(text or "")
        if m:
            return max(-1.0, min(1.0, float(m.group(1) if m.groups() else m.group(0))))
    return 0.0


def _prompt(rubric: str, item: dict[str, Any]) -> str:
    parts = [RUBRICS[rubric], "", f"Question: {item.get('question', '')}"]
    if item.get("context"):
        parts.append(f"Context so far:\n{item['context']}")
    parts.append(f"Thinking: {item.get('thinking', '')}")
    if rubric == "query":
        parts.append(f"Query: {item.get('query', '')}")
    if rubric == "answer":
        parts += [f"Answer: {item.get('answer', '')}",
                  f"Ground truth: {', '.join(item.get('golden_answers', []))}"]
    return "\n".join(parts + ["", _FORMAT])


_JUDGES: dict[tuple, HTTPJudge] = {}
_JUDGES_LOCK = threading.Lock()


def make_judge(spec: Judge | str | None, *, model: str | None = None,
               timeout: float = 60.0) -> Judge | None:
    """A judge from a config value: None, `"rule"`, `"http://HOST:PORT/v1#MODEL"` (or the URL
    with `model=`), or a `Judge` object. HTTP judges are probed once per process and shared,
    so a dead judge fails here, at start-up, with what to do."""
    if spec is None or not isinstance(spec, str):
        return spec
    if spec == "rule":
        return RuleJudge()
    if spec.startswith(("http://", "https://")):
        url, _, named = spec.partition("#")
        key = (url, named or model, timeout)
        with _JUDGES_LOCK:
            if key not in _JUDGES:
                _JUDGES[key] = HTTPJudge(url, named or model, timeout=timeout, probe=True)
            return _JUDGES[key]
    from envgym.errors import InvalidConfig

    raise InvalidConfig(f"judge must be 'rule', an OpenAI-compatible 'http://HOST:PORT/v1#MODEL' "
                        f"or a Judge object, not {spec!r}.")


class HTTPJudge:
    """An OpenAI-compatible chat-completions judge, temperature 0, with a prompt-keyed cache.

    `model=None` takes the server's first model. `probe=True` lists the models at start-up so
    an unreachable server is an `InvalidConfig` naming the URL, not a failure mid-run."""

    def __init__(self, base_url: str, model: str | None = None, *, api_key: str | None = None,
                 timeout: float = 60.0, retries: int = 3, max_tokens: int = 256,
                 probe: bool = False):
        import httpx

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        base = base_url.rstrip("/")
        base = base if base.endswith("/v1") else base + "/v1"
        self.client = httpx.Client(base_url=base, headers=headers, timeout=timeout)
        self.model, self.retries, self.max_tokens = model, retries, max_tokens
        self.cache: dict[str, float] = {}
        self.calls = 0
        self._lock = threading.Lock()
        if probe or model is None:
            self._probe()

    def _probe(self) -> None:
        import httpx

        from envgym.errors import InvalidConfig
        try:
            r = self.client.get("/models")
            r.raise_for_status()
            models = [m["id"] for m in r.json().get("data", [])]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as e:
            raise InvalidConfig(f"judge server {self.client.base_url} is not answering "
                                f"({type(e).__name__}: {e}); start an OpenAI-compatible server "
                                "there (e.g. `envgym serve-policy`) or set judge = \"rule\".") from e
        if self.model is None:
            if not models:
                raise InvalidConfig(f"judge server {self.client.base_url} lists no models; "
                                    "name one: judge = \"URL#MODEL\".")
            self.model = models[0]

    def judge(self, rubric: str, items: Sequence[dict[str, Any]]) -> list[float]:
        return [self._one(_prompt(rubric, item)) for item in items]

    def _one(self, prompt: str) -> float:
        key = hashlib.sha256(f"{self.model}\0{prompt}".encode()).hexdigest()
        with self._lock:
            if key in self.cache:
                return self.cache[key]
        score = parse_score(self._complete(prompt))
        with self._lock:
            self.cache[key] = score
        return score

    def _complete(self, prompt: str) -> str:
        """The judge's reply; retries transport errors and 5xx, then raises `PolicyError`
        naming the server, so a dead judge fails the episode visibly instead of scoring 0."""
        import time

        import httpx

        from envgym.errors import PolicyError
        body = {"model": self.model, "temperature": 0, "max_tokens": self.max_tokens,
                "messages": [{"role": "user", "content": prompt}]}
        error = ""
        for attempt in range(self.retries + 1):
            try:
                r = self.client.post("/chat/completions", json=body)
                if r.status_code < 500:
                    r.raise_for_status()
                    self.calls += 1
                    return r.json()["choices"][0]["message"]["content"] or ""
                error = f"HTTP {r.status_code}: {r.text[:200]}"
            except httpx.HTTPStatusError as e:
                raise PolicyError(f"judge server {self.client.base_url} refused the request: "
                                  f"{e.response.status_code} {e.response.text[:200]}") from e
            except (ValueError, KeyError, IndexError, TypeError) as e:
                raise PolicyError(f"judge server {self.client.base_url} sent a malformed "
                                  f"chat completion ({type(e).__name__}: {e})") from e
            except httpx.TransportError as e:
                error = f"{type(e).__name__}: {e}"
            if attempt < self.retries:
                time.sleep(0.2 * (attempt + 1))
        raise PolicyError(f"judge server {self.client.base_url} failed after {self.retries + 1} "
                          f"attempts ({error})")

    def close(self) -> None:
        self.client.close()


class RuleJudge:
    """Deterministic offline stand-in for SLATE's LLM judge: it pays only what the
    environment's own data verifies (gold passage ids, gold answers, the world's entities).

    A rule cannot read meaning, so clarity, relevance and a good plan pay nothing offline;
    they are what the HTTP judge is for. Term overlap never pays: a salad of passage words
    names many referents and states none of them.

    thinking: -1 empty. +1 only right after a search that newly retrieved a gold passage, when
    the thought states exactly one new referent (a name or literal of the world not in the
    question and not the subject of the passage just found) and that referent is what a newly
    retrieved gold passage says: the bridging entity or the answer. 0 otherwise, including a
    plan before any evidence (SLATE's judge may give it +1; no rule can verify a plan).

    query: -1 if it retrieves nothing new or finds no gold passage; +1 if it finds a gold
    passage not seen before; 0 if its gold passages were all seen before.

    answer: +1 exact match; 0 one candidate that shares tokens with the gold; -1 otherwise
    (`slate_step_reward` adds the hedge penalty for several candidates).
    """

    def judge(self, rubric: str, items: Sequence[dict[str, Any]]) -> list[float]:
        fn = {"thinking": self._thinking, "query": self._query, "answer": self._answer}[rubric]
        return [fn(item) for item in items]

    @staticmethod
    def _thinking(item: dict[str, Any]) -> float:
        think = item.get("thinking", "")
        if not _tokens(think):
            return -1.0 if RULES.on("think_empty_costs") else 0.0
        docs = item.get("documents") or {}
        evidence = _evidence_ids(item, docs)
        fresh = [i for i in item.get("last_new_ids", []) if i in evidence]
        if not RULES.on("think_needs_fresh_gold"):
            fresh = [i for i in docs if i in evidence]
        if not fresh:
            return 0.0
        vocab = vocabulary_of(item)
        claims = set(referents(think, vocab))
        if RULES.on("think_question_names_free"):
            claims -= set(referents(item.get("question", ""), vocab))
        subjects, said = set(), set()
        for i in fresh:
            title, _, body = docs[i].partition("\n")
            subjects |= set(referents(title, vocab))
            said |= set(referents(body, vocab))
        if RULES.on("think_subject_free"):
            claims -= subjects
        if not claims:
            return 0.0
        if RULES.on("think_max_claims") and len(claims) > int(RULES["think_max_claims"]):
            return 0.0
        if RULES.on("think_claim_on_chain") and item.get("chain"):
            said = _chain_values(item["chain"], fresh, vocab)
        if RULES.on("think_claim_supported") and not claims <= said - subjects:
            return 0.0
        if RULES.on("think_supports_answer") and "answer" in item \
                and not claims <= _answer_support(item, vocab):
            return 0.0
        return 1.0

    @staticmethod
    def _query(item: dict[str, Any]) -> float:
        if adds_nothing(item):
            return -1.0
        ids, seen = set(item.get("retrieved_ids", [])), set(item.get("seen_ids", []))
        docs = {**(item.get("documents") or {}), **(item.get("retrieved_docs") or {})}
        found = ids & _evidence_ids(item, docs)
        if not found:
            return -1.0 if RULES.on("query_needs_gold") else 0.0
        return 1.0 if found - seen or not RULES.on("query_seen_gold_zero") else 0.0

    @staticmethod
    def _answer(item: dict[str, Any]) -> float:
        golds = item.get("golden_answers", [])
        answer = item.get("answer", "")
        if scoring.em(answer, golds):
            return 1.0
        partial = RULES.on("answer_partial_zero") and scoring.f1(answer, golds) > 0
        if partial and RULES.on("answer_partial_names_gold"):
            partial = _names_only_gold(answer, golds, vocabulary_of(item))
        return 0.0 if partial and not is_hedge(item) else -1.0


def _tokens(text: str) -> list[str]:
    return scoring.normalize_answer(text or "").split()


def _evidence_ids(item: dict[str, Any], docs: dict[str, str]) -> set[str]:
    """Gold passages: the task's own ids, else retrieved passages that state a gold answer."""
    gold = set(item.get("gold_doc_ids") or [])
    if gold:
        return gold
    golds = item.get("golden_answers") or []
    return {i for i, text in docs.items() if golds and scoring.subem(text, golds)}


def _chain_values(chain: Sequence[dict[str, Any]], fresh: Sequence[str],
                  vocab: Vocabulary) -> set[str]:
    """What the question's hop chain says in the passages just found: the bridging entity or
    the answer each fresh gold passage gives. A gold passage states more (a founder and a
    year); only the hop the question walks through is progress."""
    return {r for hop in chain if str(hop.get("doc_id")) in set(fresh)
            for r in referents(str(hop.get("value", "")), vocab)}


def _answer_support(item: dict[str, Any], vocab: Vocabulary) -> set[str]:
    """Referents a thought before an answer may state: the answer's own, or (a comparison,
    whose answer is one of the question's names) a hop value of the entity it answers."""
    named = set(referents(item.get("answer", ""), vocab))
    options = named & set(referents(item.get("question", ""), vocab))
    for hop in item.get("chain") or []:
        if set(referents(str(hop.get("entity", "")), vocab)) & options:
            named |= set(referents(str(hop.get("value", "")), vocab))
    return named


def _names_only_gold(answer: str, golds: Sequence[str], vocab: Vocabulary) -> bool:
    """A partly right answer names the gold entity and nothing else (a part of its name, the
    gold with a word the world does not know); a word shared by many names ('Institute')
    names no entity, so overlapping on it is not partly right."""
    named = set(referents(answer, vocab))
    return bool(named) and any(named == set(referents(g, vocab)) for g in golds)

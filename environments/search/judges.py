"""SLATE process rewards: rubric judges and the per-step reward equations.

SLATE scores each step on a ternary scale {-1, 0, +1} for thinking, query and answer
(methods §2.3). Two `Judge`s implement the rubrics: `HTTPJudge` asks an OpenAI-compatible
model at temperature 0 with SLATE's rubric structure and `<score>` parsing; `RuleJudge` is a
deterministic offline stand-in that uses privileged task data (gold passages, gold answers).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from typing import Any

from envgym.environments.search import scoring
from envgym.protocols import Judge

__all__ = ["HTTPJudge", "RUBRICS", "RuleJudge", "make_judge", "parse_score", "slate_step_reward"]

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
    """Eq. 3 (search: think + query) and Eq. 4 (answer: think + answer + λ(B−t)/B), with two
    facts the environment knows for certain applied over whichever judge scores the rubrics.

    Deviations from SLATE's `llm_judge` (the reference), each stated:

    * `turn` counts from 1, so answering at the first step earns λ(B−1)/B; SLATE's code passes
      a 0-based turn and pays λ there, an off-by-one we do not copy. The forced answer after
      the budget (turn B + 1) earns no bonus rather than a negative one.
    * A search that adds no information (a repeated query, or one whose documents were all
      retrieved before) costs: its query scores -1 (the rubric's novelty criterion, decided by
      document ids rather than left to the judge) and its thinking at most 0 (a thought that
      leads to nothing new made no progress), so the step pays <= -1. SLATE's judge may score
      such a step 0 (think +1, query -1), which makes padding searches free.
    * An answer that names several candidates (`answer_candidates` >= 2) is a hedge: its
      answer score is at most -1 (a list that holds the gold somewhere is not "partially
      correct") and it pays `judge_hedge` = -0.5, so it is worth less than one wrong answer.
      SLATE's judge may call such a list partial (0).
    * `think=False` (the forced answer after the budget, which follows no thinking) scores
      no thinking; SLATE's loop judges nothing at that point.
    """
    item = {**item, "turn": turn}
    out = {"judge_think": judge.judge("thinking", [item])[0]} if think else {}
    if kind == "search":
        if adds_nothing(item):
            out["judge_think"] = min(out.get("judge_think", 0.0), 0.0)
            out["judge_query"] = -1.0
        else:
            out["judge_query"] = judge.judge("query", [item])[0]
    else:
        out["judge_answer"] = judge.judge("answer", [item])[0]
        if answer_candidates(item.get("answer", ""), item.get("golden_answers", [])) > 1:
            out["judge_answer"] = min(out["judge_answer"], -1.0)
            out["judge_hedge"] = HEDGE_PENALTY
        out["judge_bonus"] = lam * max(0, budget - turn) / budget
    return out


HEDGE_PENALTY = -0.5
_DELIMITERS = re.compile(r"[,;/|&\n]|\bor\b|\band\b", re.I)


def adds_nothing(item: dict[str, Any]) -> bool:
    """A search step that repeats an earlier query or retrieves only documents seen before."""
    query = scoring.normalize_answer(item.get("query", ""))
    if query in {scoring.normalize_answer(p) for p in item.get("previous_queries", [])}:
        return True
    return set(item.get("retrieved_ids", [])) <= set(item.get("seen_ids", []))


def answer_candidates(answer: str, golds: Sequence[str]) -> int:
    """How many answers `answer` names: its delimited parts (`,` `;` `/` `|` `&`, newlines,
    "or", "and") beyond those of the gold itself, or its size in gold-answer units (one token
    of slack each), whichever is larger. An exact match is one candidate by definition.

    Size catches lists without delimiters ("Velmora Dastow Brenvia"); the price is that a
    sentence three times the gold's length ("the country is Quandria") counts as a hedge too:
    the rule cannot tell a verbose answer from a list, and the prompt asks for the bare entity.
    """
    if not golds or scoring.em(answer, golds):
        return 1
    def parts(text: str) -> int:
        return sum(1 for p in _DELIMITERS.split(text) if scoring.normalize_answer(p))
    gold_len = max(len(scoring.normalize_answer(g).split()) for g in golds) or 1
    by_parts = parts(answer) - max(parts(g) for g in golds) + 1
    by_size = -(-len(scoring.normalize_answer(answer).split()) // (gold_len + 1))
    return max(1, by_parts, by_size)


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
    """Deterministic offline stand-in for SLATE's LLM judge, from privileged task data.

    The rubrics are SLATE's (`RUBRICS`); a rule cannot read meaning, so each criterion is
    decided by what the text *adds*, never by word overlap with the question (sharing a word
    with the question is what a paste does best). "Evidence" is the gold passages
    (`gold_doc_ids`, or, for datasets without them, retrieved passages that contain a gold
    answer); "retrieved" is the full text of every passage the episode has retrieved.

    thinking: -1 empty. 0 when it is a copy (half its tokens or more lie in verbatim runs of
    `COPY_RUN` tokens from the question or a retrieved passage), when it has few words of its
    own (under `OWN_SHARE` of its tokens are neither in the question nor retrieved: a word
    salad of the context is not reasoning), or when it names more terms from non-evidence
    passages than from evidence (it lists the context instead of picking from it). +1 when it
    states a term of evidence that the previous search newly retrieved (progress), else 0.
    So thinking earns at most once per newly found gold passage, whatever it pastes.
    Deviation: SLATE's judge may give +1 to a clear plan before any retrieval; here a
    thought earns +1 only for evidence it has just obtained.

    query: -1 if it repeats an earlier query, retrieves nothing new, or finds no evidence;
    +1 if it finds evidence not seen before; 0 if it finds new passages but only evidence
    already seen.

    answer: +1 exact match; 0 partially correct (F1 > 0) and a single candidate; -1
    otherwise (`slate_step_reward` adds the hedge penalty for lists).
    """

    COPY_RUN = 5
    OWN_SHARE = 0.25

    def judge(self, rubric: str, items: Sequence[dict[str, Any]]) -> list[float]:
        fn = {"thinking": self._thinking, "query": self._query, "answer": self._answer}[rubric]
        return [fn(item) for item in items]

    @classmethod
    def _thinking(cls, item: dict[str, Any]) -> float:
        words = _tokens(item.get("thinking", ""))
        if not words:
            return -1.0
        docs = item.get("documents") or {}
        question = _tokens(item.get("question", ""))
        sources = [question, *(_tokens(t) for t in docs.values())]
        if _copied_share(words, sources, cls.COPY_RUN) >= 0.5:
            return 0.0
        seen = set(question).union(*map(set, sources))
        if sum(w not in seen for w in words) < cls.OWN_SHARE * len(words):
            return 0.0
        evidence = _evidence_ids(item, docs)
        mentioned = set(words) - set(question) - _STOP
        gold_terms = _terms(docs, evidence) - set(question)
        other_terms = _terms(docs, set(docs) - evidence) - gold_terms - set(question)
        if len(mentioned & other_terms) > len(mentioned & gold_terms):
            return 0.0
        fresh = [i for i in item.get("last_new_ids", []) if i in evidence]
        fresh_terms = _terms(docs, set(fresh)) - set(question) - _STOP
        return 1.0 if mentioned & fresh_terms else 0.0

    @staticmethod
    def _query(item: dict[str, Any]) -> float:
        if adds_nothing(item):
            return -1.0
        ids, seen = set(item.get("retrieved_ids", [])), set(item.get("seen_ids", []))
        docs = {**(item.get("documents") or {}), **(item.get("retrieved_docs") or {})}
        found = ids & _evidence_ids(item, docs)
        if not found:
            return -1.0
        return 1.0 if found - seen else 0.0

    @staticmethod
    def _answer(item: dict[str, Any]) -> float:
        golds = item.get("golden_answers", [])
        answer = item.get("answer", "")
        if scoring.em(answer, golds):
            return 1.0
        single = answer_candidates(answer, golds) == 1
        return 0.0 if single and scoring.f1(answer, golds) > 0 else -1.0


_STOP = frozenset("a an the of in on at to for by is was were be as and or it its this that with "
                  "from i we he she they not so".split())


def _tokens(text: str) -> list[str]:
    return scoring.normalize_answer(text or "").split()


def _terms(docs: dict[str, str], ids: set[str]) -> set[str]:
    return {w for i in ids if i in docs for w in _tokens(docs[i])} - _STOP


def _evidence_ids(item: dict[str, Any], docs: dict[str, str]) -> set[str]:
    """Gold passages: the task's own ids, else retrieved passages that state a gold answer."""
    gold = set(item.get("gold_doc_ids") or [])
    if gold:
        return gold
    golds = item.get("golden_answers") or []
    return {i for i, text in docs.items() if golds and scoring.subem(text, golds)}


def _copied_share(words: list[str], sources: Sequence[list[str]], run: int) -> float:
    """Share of `words` inside verbatim runs of >= `run` tokens that occur in a source (a
    source shorter than `run`, e.g. a four-word question, counts when copied whole)."""
    covered = [False] * len(words)
    for src in sources:
        n = min(run, len(src))
        if n == 0:
            continue
        grams = {tuple(src[i:i + n]) for i in range(len(src) - n + 1)}
        for i in range(len(words) - n + 1):
            if tuple(words[i:i + n]) in grams:
                covered[i:i + n] = [True] * n
    return sum(covered) / len(words)

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
                      lam: float = 0.1) -> dict[str, float]:
    """Eq. 3 (search: think + query) and Eq. 4 (answer: think + answer + λ(B−t)/B).

    `turn` counts from 1, so answering at the first step earns λ(B−1)/B; SLATE's code passes
    a 0-based turn and pays λ there, an off-by-one we do not copy. The forced answer after
    the budget (turn B + 1) earns no bonus rather than a negative one.
    """
    out = {"judge_think": judge.judge("thinking", [item])[0]}
    if kind == "search":
        out["judge_query"] = judge.judge("query", [item])[0]
    else:
        out["judge_answer"] = judge.judge("answer", [item])[0]
        out["judge_bonus"] = lam * max(0, budget - turn) / budget
    return out


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
    """Deterministic offline judge from privileged task data.

    thinking: -1 empty, +1 if it shares a content word with the question or context, else 0.
    query: -1 if it repeats an earlier query or finds no gold passage, +1 if it finds a gold
    passage not seen before, 0 if it only finds gold passages already seen.
    answer: +1 exact match, 0 partial (F1 > 0), -1 otherwise.
    """

    def judge(self, rubric: str, items: Sequence[dict[str, Any]]) -> list[float]:
        fn = {"thinking": self._thinking, "query": self._query, "answer": self._answer}[rubric]
        return [fn(item) for item in items]

    @staticmethod
    def _thinking(item: dict[str, Any]) -> float:
        words = set(scoring.normalize_answer(item.get("thinking", "")).split())
        if not words:
            return -1.0
        known = set(scoring.normalize_answer(f"{item.get('question', '')} {item.get('context', '')}").split())
        return 1.0 if {w for w in words if len(w) > 3} & known else 0.0

    @staticmethod
    def _query(item: dict[str, Any]) -> float:
        q = scoring.normalize_answer(item.get("query", ""))
        if q in {scoring.normalize_answer(p) for p in item.get("previous_queries", [])}:
            return -1.0
        found = set(item.get("retrieved_ids", [])) & set(item.get("gold_doc_ids", []))
        if not found:
            return -1.0
        return 1.0 if found - set(item.get("seen_ids", [])) else 0.0

    @staticmethod
    def _answer(item: dict[str, Any]) -> float:
        golds = item.get("golden_answers", [])
        if scoring.em(item.get("answer", ""), golds):
            return 1.0
        return 0.0 if scoring.f1(item.get("answer", ""), golds) > 0 else -1.0

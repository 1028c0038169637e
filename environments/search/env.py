"""`envgym/Search-v0`: multi-turn question answering with a search tool (Search-R1 protocol).

The policy writes `<think>…</think>` then either `<search>query</search>`, answered with
`<information>Doc 1(Title: …) …</information>` spliced into its running turn, or
`<answer>…</answer>`, which ends the episode. `protocol="ig"` uses IG-Search's
`<documents>`/`<refine>` vocabulary. The outcome reward is Search-R1's normalised EM (or F1,
or the format-aware EM variant); with a `judge` (`"rule"`, an OpenAI-compatible
`"http://HOST:PORT/v1#MODEL"`, or a `Judge`), every step pays SLATE's process reward instead:
Eq. 3 on search steps, Eq. 4 alone on the answer step (`judge_em=True` adds the EM on top).
`judge_reward=False` keeps the judge as a measurement only: the reward is the outcome score
(SLATE validates on EM) and the judge's scores go to `info["judge"]` and the outcome's
`judge_return`, so a held-out EM can be logged beside the judge reward.
Each search step marks its query characters with a `query` span. Actions end at
`stop_sequences` (`</search>`, `</answer>`), so the model never writes its own documents.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from envgym.core import StepResult, TextEnv, user
from envgym.environments.search import scoring
from envgym.environments.search.data import load_corpus, load_tasks
from envgym.environments.search.formatting import (IG_PROMPT, SEARCH_R1_INVALID, SEARCH_R1_PROMPT,
                                                   get_formatter)
from envgym.environments.search.judges import make_judge, slate_step_reward
from envgym.environments.search.retrievers import BM25Retriever, Hit, Retriever
from envgym.errors import InvalidConfig, RetrieverUnavailable
from envgym.protocols import Judge
from envgym.resources import file_key, shared

__all__ = ["SearchEnv"]

JUDGED_INVALID_PENALTY = -3.0
_CALL = re.compile(r"<(search|answer)>(.*?)</\1>", re.DOTALL)
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def _bm25_for(corpus: list[dict[str, str]]) -> BM25Retriever:
    """One index per corpus object per process, shared by every `make()` and `fork()`.

    Keyed by the corpus object: corpora come from `_load_tasks`/`_load_corpus`, which return
    the same list to every environment. The cached value holds the corpus, so its id stays
    unique while the index lives."""
    return shared(("search", "bm25", id(corpus)),
                  lambda: (corpus, BM25Retriever.from_documents(corpus)))[1]


def _load_tasks(dataset: str | None, dataset_format: str | None, world_seed: int, split: str
                ) -> tuple[list[dict[str, Any]], list[dict[str, str]] | None]:
    """(tasks of `split`, corpus or None), loaded once per process per file version."""
    def build():
        tasks, corpus = load_tasks(dataset, dataset_format, world_seed)
        return (_split(tasks, split) if dataset is None else tasks), corpus
    return shared(("search", "tasks", file_key(dataset), dataset_format, world_seed,
                   split if dataset is None else None), build)


def _vocabulary(world_seed: int):
    """The generated world's entity set (names, aliases, fact values), once per process."""
    from envgym.environments.search.candidates import world_vocabulary
    from envgym.environments.search.data import default_world

    return shared(("search", "vocabulary", world_seed),
                  lambda: world_vocabulary(default_world(world_seed).entities))


def _load_corpus(path: str) -> list[dict[str, str]]:
    return shared(("search", "corpus", file_key(path)), lambda: load_corpus(path))


def _make_retriever(spec: str | Retriever, corpus: list[dict[str, str]]) -> Retriever:
    if not isinstance(spec, str):
        return spec
    if spec.startswith(("http://", "https://")):
        from envgym.environments.search.http import HTTPRetriever

        # One thread-safe client (and connection pool) per URL per process, not one per episode.
        return shared(("search", "http", spec), lambda: HTTPRetriever(spec))
    if spec == "bm25":
        return _bm25_for(corpus)
    from envgym.environments.search import retrievers

    def dense() -> retrievers.DenseRetriever:
        return shared(("search", "dense", id(corpus)),
                      lambda: (corpus, retrievers.DenseRetriever.from_documents(corpus)))[1]

    if spec == "dense":
        return dense()
    if spec == "hybrid":
        return shared(("search", "hybrid", id(corpus)),
                      lambda: retrievers.HybridRetriever(_bm25_for(corpus), dense()))
    return shared(("search", "index", file_key(spec)), lambda: retrievers.load_retriever(spec))


class SearchEnv(TextEnv):
    """Search-augmented QA over the generated world (or a user dataset and corpus)."""

    shared_resources = ("retriever", "tasks", "judge", "formatter", "vocabulary")
    stop_sequences = ("</search>", "</answer>")  # Search-R1 cuts each action there
    forced_answer = "\n<answer>"  # what SLATE's tree rollouts splice in after B steps
    forced_stop_sequences = ("</answer>",)  # a forced step can only answer: no search stop

    def __init__(self, *, dataset: str | None = None, dataset_format: str | None = None,
                 corpus: str | None = None, retriever: str | Retriever = "bm25", topk: int = 3,
                 max_turns: int = 4, protocol: str = "search_r1", reward: str = "em",
                 formatter: str | Callable[[Sequence[Hit]], str] = "search_r1",
                 judge: Judge | str | None = None, judge_model: str | None = None,
                 judge_timeout: float = 60.0, judge_em: bool = False, judge_reward: bool = True,
                 slate_lambda: float = 0.1,
                 slate_budget: int | None = None,
                 split: str = "train", world_seed: int = 0, max_invalid_actions: int = 3,
                 render_mode: str | None = None):
        super().__init__(max_turns=max_turns, max_invalid_actions=max_invalid_actions,
                         render_mode=render_mode)
        if protocol not in ("search_r1", "ig"):
            raise InvalidConfig(f"protocol must be 'search_r1' or 'ig', not {protocol!r}.")
        if reward not in ("em", "f1", "em_format"):
            raise InvalidConfig(f"reward must be 'em', 'f1' or 'em_format', not {reward!r}.")
        if reward == "em_format" and protocol != "search_r1":
            raise InvalidConfig("reward='em_format' is Search-R1's format check: use it with "
                                "protocol='search_r1'.")
        if topk < 1 or max_turns < 1:
            raise InvalidConfig("topk and max_turns must be at least 1.")
        tasks, task_corpus = _load_tasks(dataset, dataset_format, world_seed, split)
        if corpus is not None:
            task_corpus = _load_corpus(corpus)
        if task_corpus is None and isinstance(retriever, str) and retriever in ("bm25", "dense", "hybrid"):
            raise InvalidConfig("this dataset has no corpus: pass corpus=PATH (wiki-18 style JSONL), "
                                "a saved index directory, or a retriever URL.")
        self.tasks = tasks
        self.vocabulary = _vocabulary(world_seed) if dataset is None else None  # hedge judging
        self.retriever = _make_retriever(retriever, task_corpus or [])
        self.topk, self.protocol, self.reward_kind = topk, protocol, reward
        self.formatter = get_formatter(formatter)
        self.judge: Judge | None = make_judge(judge, model=judge_model, timeout=judge_timeout)
        self.judge_em, self.judge_reward = judge_em, judge_reward
        self.slate_lambda = slate_lambda
        self.budget = slate_budget or max_turns  # SLATE's B in Eq. 4's λ(B − t)/B
        self.task: dict[str, Any] = {}

    @classmethod
    def task_ids(cls, kwargs: dict[str, Any]) -> list[str] | None:
        """The ordered pool `seed % N` picks from (config validation compares train and eval
        pools by id): the generated questions of `split`, or a local dataset's; None for a
        Hub dataset, which is not fetched just to check."""
        dataset = kwargs.get("dataset")
        if dataset is not None and not Path(dataset).exists():
            return None
        tasks, _ = _load_tasks(dataset, kwargs.get("dataset_format"),
                               kwargs.get("world_seed", 0), kwargs.get("split", "train"))
        return [str(t["id"]) for t in tasks]

    # ---- episode --------------------------------------------------------------------------

    def _reset(self, seed: int, options: dict[str, Any]):
        if "task_id" in options:
            matches = [t for t in self.tasks if t["id"] == str(options["task_id"])]
            if not matches:
                raise InvalidConfig(f"no task with id {options['task_id']!r} in this split.")
            self.task = matches[0]
        else:
            self.task = self.tasks[seed % len(self.tasks)]
        self.task_id = self.task["id"]
        self.retrieved: list[str] = []
        self.queries: list[str] = []
        self.context: list[str] = []  # SLATE judge context: Thinking / Query / Retrieved
        self.information: list[str] = []  # the retrieved blocks, as the environment wrote them
        self.documents: dict[str, str] = {}  # every retrieved passage's text, for the judge
        self.last_new_ids: list[str] = []  # passages the previous step retrieved for the first time
        self.response = ""  # every action and spliced observation, for Search-R1's format check
        self.forced = False  # set by `force_answer()`: the next step parses as an answer only
        self.judge_return = 0.0  # the judge's scores so far, paid or not
        self.format_ok = True
        template = IG_PROMPT if self.protocol == "ig" else SEARCH_R1_PROMPT
        return [user(template.format(question=self.task["question"]))], {}

    def _state(self) -> Any:
        # the turn too: GiGPO must never group steps of different depths (methods §8)
        return {"task": self.task_id, "turn": self.turn, "retrieved": sorted(set(self.retrieved))}

    def _step(self, action: str) -> StepResult:
        self.response += action
        result = self._measure_judge(self._parse_and_act(action))
        self.response += "".join(m["content"] for m in result.observation)
        self.last_new_ids = list(result.info.get("new_ids", []))
        return result

    def _measure_judge(self, result: StepResult) -> StepResult:
        """With `judge_reward=False` the judge's components leave the reward for `info`."""
        judged = {k: v for k, v in result.reward_components.items() if k.startswith("judge_")}
        self.judge_return += sum(judged.values())
        if self.judge is not None and not self.judge_reward:
            result.reward_components = {k: v for k, v in result.reward_components.items()
                                        if k not in judged}
            result.info["judge"] = judged
            if "outcome" in result.info:
                result.reward_components.setdefault("outcome", result.info["outcome"]["score"])
        if "outcome" in result.info:
            result.info["outcome"]["judge_return"] = self.judge_return
        return result

    def force_answer(self) -> None:
        """SLATE's forced answer: the next action is `forced_answer` plus the model's text, and
        it parses in answer-only mode, so it can never become a search (whatever a backend
        wrote after a `</search>`): the answer is the text after `<answer>` up to the first
        `</answer>` or the end. No thinking precedes it, so none is judged."""
        self.forced = True

    def _forced_answer(self, action: str) -> StepResult:
        body = action.split("<answer>", 1)[-1].split("</answer>", 1)[0].strip()
        if not body:
            return self._invalid("the forced answer is empty.")
        return self._answer(body, thinking=None)

    def _parse_and_act(self, action: str) -> StepResult:
        if self.forced:
            return self._forced_answer(action)
        match = _first_call(action)
        if match is None:
            return self._invalid("no <search>…</search> or <answer>…</answer> in the action.")
        # every thought before the call is the step's thinking, so a second <think> naming
        # another candidate is read with the first rather than hidden behind it
        thinking_text = "\n".join(t.strip() for t in _THINK.findall(action[:match.start()])
                                   if t.strip())
        self.format_ok &= bool(thinking_text)
        content = match.group(2)
        if match.group(1) == "search":
            return self._search(action, match, content, thinking_text)
        return self._answer(content.strip(), thinking_text)

    def _invalid(self, error: str) -> StepResult:
        # Under a judge a step pays at least -2 (think -1, query or answer -1): a malformed
        # action must pay less, or writing garbage would beat an honest bad query.
        if self.judge is None:
            result = self.invalid(error)
        elif self.judge_reward:
            result = self.invalid(error, penalty=JUDGED_INVALID_PENALTY)
        else:  # the judge only measures: its penalty goes to judge_return, the reward stays EM
            result = self.invalid(error, penalty=0.0)
            result.reward_components = {"judge_invalid": JUDGED_INVALID_PENALTY}
        result.observation = [{"role": "continuation", "content": f"\n{SEARCH_R1_INVALID}\n"}]
        self.format_ok = False
        return result

    def _search(self, action: str, match: re.Match, content: str, thinking: str) -> StepResult:
        query = content.strip()
        if not query:
            return self._invalid("the search query is empty.")
        start = match.start(2) + (len(content) - len(content.lstrip()))
        try:
            hits = self.retriever.search([query], self.topk)[0]
        except RetrieverUnavailable as e:  # an observation, not a crashed rollout (GEM pattern)
            return StepResult([{"role": "continuation", "content": f"\n\n<information>Search error: "
                                f"{e}</information>\n\n"}], info={"retrieval_error": str(e)})
        docs = self.formatter(hits).strip()  # Search-R1 strips the passages string
        tag = "documents" if self.protocol == "ig" else "information"
        observation = (f"\n<documents>{docs}</documents>\n" if self.protocol == "ig"
                       else f"\n\n<information>{docs}</information>\n\n")
        self.information.append(docs)
        ids = [h.document.id for h in hits]
        found = {h.document.id: h.document.contents for h in hits}
        components = self._judge_search(thinking, query, found)
        new_ids = [i for i in dict.fromkeys(ids) if i not in self.documents]
        self.queries.append(query)
        self.retrieved += ids
        self.documents.update(found)
        self.context += [f"Thinking: {thinking}", f"Query: {query}", f"Retrieved: {docs[:300]}"]
        info = {"spans": [{"kind": "query", "start": start, "end": start + len(query), "value": None}],
                "tool_calls": [{"name": "search", "arguments": {"query": query}}],
                "retrieved_ids": ids, "new_ids": new_ids, "observation_tag": tag}
        return StepResult([{"role": "continuation", "content": observation}], components, info=info)

    def _answer(self, answer: str, thinking: str | None) -> StepResult:
        golds = self.task["golden_answers"]
        em, f1 = scoring.em(answer, golds), scoring.f1(answer, golds)
        score = {"em": em, "f1": f1, "em_format": self._em_format(em)}[self.reward_kind]
        judged = self._judge_answer(thinking, answer)
        # With a judge the answer step pays Eq. 4 alone; `judge_em=True` adds the EM on top.
        components = {"outcome": score} if not judged or self.judge_em else {}
        components.update(judged)
        outcome = {**self._metrics(em, f1), "success": em == 1.0, "score": score, "answered": True}
        return StepResult([], components, terminated=True,
                          info={"outcome": outcome, "tool_calls": [{"name": "answer",
                                                                    "arguments": {"answer": answer}}]})

    def _em_format(self, em: float) -> float:
        """Search-R1's `qa_em_format` (structure 0.2, retrieval 0.1, final format 0.1):
        correct 1 (valid format) or 0.8; wrong with a valid format 0.3 when a gold answer is
        in a retrieved `<information>` block (the environment's own, never the model's query
        or thinking), else 0.2; wrong and badly formatted 0.1. "Valid" is Search-R1's
        `is_valid_sequence` over the whole response: think → (search → information → think)*
        → answer, nothing but whitespace between tags."""
        valid = scoring.valid_sequence(self.response)
        if em:
            return 1.0 if valid else 0.8
        if not valid:
            return 0.1
        found = any(scoring.subem(block, self.task["golden_answers"]) for block in self.information)
        return 0.3 if found else 0.2

    def _metrics(self, em: float, f1: float) -> dict[str, Any]:
        out: dict[str, Any] = {"em": em, "f1": f1, "n_searches": len(self.queries),
                               "golden_answers": list(self.task["golden_answers"])}
        gold = self.task.get("gold_doc_ids") or []
        if gold:
            out["gold_recall"] = len(set(gold) & set(self.retrieved)) / len(set(gold))
        return out

    def _outcome_on_truncation(self) -> dict[str, Any]:
        return {**self._metrics(0.0, 0.0), "success": False, "score": 0.0, "answered": False,
                "judge_return": self.judge_return}

    # ---- SLATE process rewards (Eq. 3 and 4), when a judge is configured --------------------

    def _judge_item(self, thinking: str, **extra: Any) -> dict[str, Any]:
        return {"question": self.task["question"], "context": "\n".join(self.context),
                "thinking": thinking, "golden_answers": self.task["golden_answers"],
                "gold_doc_ids": self.task.get("gold_doc_ids") or [],
                "previous_queries": list(self.queries), "seen_ids": list(self.retrieved),
                "documents": dict(self.documents), "last_new_ids": list(self.last_new_ids),
                "vocabulary": self.vocabulary, "chain": self.task.get("chain") or [], **extra}

    def _judge_search(self, thinking: str, query: str, found: dict[str, str]) -> dict[str, float]:
        if self.judge is None:
            return {}
        item = self._judge_item(thinking, query=query, retrieved_ids=list(found),
                                retrieved_docs=found)
        return slate_step_reward(self.judge, item, "search", self.turn, self.budget, self.slate_lambda)

    def _judge_answer(self, thinking: str | None, answer: str) -> dict[str, float]:
        if self.judge is None:
            return {}
        item = self._judge_item(thinking or "", answer=answer)
        out = slate_step_reward(self.judge, item, "answer", self.turn, self.budget,
                                self.slate_lambda, think=thinking is not None)
        return out

    @classmethod
    def summarize(cls, outcomes: list[dict[str, Any]]) -> dict[str, float]:
        metrics = super().summarize([{k: v for k, v in o.items() if k != "golden_answers"}
                                     for o in outcomes])
        return {k: metrics[k] for k in ("em", "f1", "n_searches", "gold_recall", "success", "score",
                                        "answered", "judge_return") if k in metrics}


def _first_call(action: str) -> re.Match | None:
    """Search-R1 cuts the action at the first `</search>` or `</answer>` and parses that."""
    cuts = [i + len(tag) for tag in ("</search>", "</answer>") if (i := action.find(tag)) != -1]
    if not cuts:
        return None
    matches = list(_CALL.finditer(action[:min(cuts)]))
    return matches[-1] if matches else None


def _split(tasks: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    """Deterministic 80/20 split of the generated questions: every 5th is `test`."""
    if split == "all":
        return tasks
    if split not in ("train", "test"):
        raise InvalidConfig(f"split must be 'train', 'test' or 'all', not {split!r}.")
    return [t for i, t in enumerate(tasks) if (i % 5 == 0) == (split == "test")]

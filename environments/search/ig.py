"""IG-Search information-gain step rewards (methods §1.2-1.3), computed over a batch.

    IG_t = s(a* | C_t^real) - (1/N) Σ_j s(a* | C_t^rand,j)

where s is the head-weighted mean log-probability of the gold answer a* after "\\n<answer> "
(the first H=3 answer tokens weigh 3.0, weights renormalised to mean 1), C_t^real is the prompt
prefix plus the (search, documents, refine) blocks of steps ≤ t, and C_t^rand,j replaces step
t's documents and refinement *jointly* by a pair drawn from other steps of the batch (pairs
whose documents have < 10 characters, and pairs identical in content to the step's own, are
excluded: the released code drops identical pairs, and a sibling rollout that retrieved the
very same documents would pull IG toward 0). The pool spans
rollouts, so this is a batch-level function and not part of `step()`. IG does not depend on
whether the rollout answered correctly, which is why it still gives signal when a whole group
fails. Each value is attached to its step's query span for per-token advantage modulation.

Two entry points: `information_gain` works on text (prompt + response strings) and
`information_gain_ids` on recorded trajectories, scoring the exact token ids the policy saw
(chat template included) with only step t's block swapped; the trainer uses the latter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envgym.protocols import Scorer

__all__ = ["IGRollout", "IGStep", "TokenStep", "head_weighted_mean", "ig_diagnostics",
           "information_gain", "information_gain_ids", "parse_steps", "token_steps"]

ANSWER_PREFIX = "\n<answer> "
_TAG = re.compile(r"</?[a-z]+>")


@dataclass
class IGStep:
    query: str
    query_start: int  # character offsets of the query inside the response
    query_end: int
    search_block: str
    documents_block: str = ""
    refine_block: str = ""
    skipped: bool = False

    @property
    def doc_text(self) -> str:
        return _TAG.sub("", self.documents_block).strip()


@dataclass
class IGRollout:
    """The prompt, the whole assistant response (actions and spliced observations) and gold."""

    prompt: str
    response: str
    golden_answers: list[str]
    turn_offsets: list[int] = field(default_factory=list)

    @classmethod
    def from_steps(cls, prompt: str, actions: Sequence[str], observations: Sequence[str],
                   golden_answers: Sequence[str]) -> IGRollout:
        """Concatenate each action with the observation text that followed it."""
        response, offsets = "", []
        for i, action in enumerate(actions):
            offsets.append(len(response))
            response += action + (observations[i] if i < len(observations) else "")
        return cls(prompt, response, list(golden_answers), offsets)


def parse_steps(response: str, doc_tags: Sequence[str] = ("documents", "information")
                ) -> tuple[str, list[IGStep]]:
    """(text before the first `<search>`, steps). A step with no documents block is skipped."""
    searches = list(re.finditer(r"<search>(.*?)</search>", response, re.DOTALL))
    if not searches:
        return response, []
    docs_re = re.compile(r"<(%s)>(.*?)</\1>" % "|".join(doc_tags), re.DOTALL)
    steps = []
    for i, m in enumerate(searches):
        end = searches[i + 1].start() if i + 1 < len(searches) else len(response)
        seg = response[m.end():end]
        raw = m.group(1)
        start = m.start(1) + len(raw) - len(raw.lstrip())
        step = IGStep(raw.strip(), start, start + len(raw.strip()), m.group(0))
        docs = docs_re.search(seg)
        if docs is None or not docs.group(2).strip():
            step.skipped = True
        else:
            step.documents_block = docs.group(0)
            step.refine_block = _refine_after(seg[docs.end():])
        steps.append(step)
    return response[:searches[0].start()], steps


def _refine_after(text: str) -> str:
    """The first `<refine>` after the documents; an unclosed one ends at \\n<search> or \\n<answer>."""
    start = text.find("<refine>")
    if start == -1 or (text.find("<documents>") != -1 and text.find("<documents>") < start):
        return ""
    close = text.find("</refine>", start)
    if close != -1:
        return text[start:close + len("</refine>")]
    stops = [i for i in (text.find("\n<search>", start), text.find("\n<answer>", start)) if i != -1]
    return text[start:min(stops)] if stops else text[start:]


def head_weighted_mean(logprobs: Sequence[float], n_head: int = 3, head_weight: float = 3.0) -> float:
    """Σ w_k log p_k / Σ w_k, i.e. the mean with weights renormalised to mean 1."""
    lp = np.asarray(logprobs, dtype=np.float64)
    if lp.size == 0:
        return 0.0
    w = np.ones_like(lp)
    w[:min(n_head, lp.size)] = head_weight
    w = w / w.mean()
    return float((w * lp).mean())


def _context(prefix: str, steps: list[IGStep], t: int, pair: tuple[str, str] | None = None) -> str:
    blocks = []
    for s in steps[:t + 1]:
        docs, refine = pair if (s is steps[t] and pair is not None) else (s.documents_block, s.refine_block)
        blocks += [s.search_block, docs] + ([refine] if refine else [])
    return prefix + "\n".join(blocks)


def information_gain(rollouts: Sequence[IGRollout], scorer: Scorer, *, n_random: int = 3,
                     max_context_tokens: int = 4096, tokenizer: Any = None,
                     max_gold_variants: int = 1, n_head_tokens: int = 3, head_weight: float = 3.0,
                     aggregate: str = "mean", min_doc_chars: int = 10, seed: int = 0
                     ) -> list[dict[str, Any]]:
    """Per rollout: `{"steps": [...], "ig": aggregate}`; each step carries its query span.

    `tokenizer` (default: `scorer.tokenizer` if present) does the left truncation to
    `max_context_tokens`; without one, contexts keep their last 4·max_context_tokens characters.
    """
    agg = {"mean": np.mean, "sum": np.sum, "max": np.max}[aggregate]
    parsed = [parse_steps(r.response) for r in rollouts]
    pool = [(i, t, s.documents_block, s.refine_block) for i, (_, steps) in enumerate(parsed)
            for t, s in enumerate(steps) if not s.skipped and len(s.doc_text) >= min_doc_chars]
    rng = np.random.default_rng(seed)
    truncate = _truncator(tokenizer if tokenizer is not None else getattr(scorer, "tokenizer", None),
                          max_context_tokens)
    jobs: list[tuple[int, int, list[str]]] = []  # (rollout, step, contexts: real then N random)
    for i, (prefix, steps) in enumerate(parsed):
        head = rollouts[i].prompt + prefix
        for t, s in enumerate(steps):
            own = (s.documents_block, s.refine_block)
            candidates = [p for p in pool if (p[0], p[1]) != (i, t) and p[2:] != own]
            if s.skipped or not candidates:
                s.skipped = True
                continue
            picks = rng.choice(len(candidates), size=n_random, replace=len(candidates) < n_random)
            contexts = [_context(head, steps, t)] + [
                _context(head, steps, t, candidates[k][2:]) for k in picks]
            jobs.append((i, t, [truncate(c) + ANSWER_PREFIX for c in contexts]))
    scores = _score_jobs(jobs, rollouts, scorer, max_gold_variants, n_head_tokens, head_weight)
    return _assemble(rollouts, parsed, jobs, scores, agg)


def _truncator(tokenizer: Any, max_tokens: int) -> Callable[[str], str]:
    def by_tokens(text: str) -> str:
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = enc["offset_mapping"]
        return text if len(offsets) <= max_tokens else text[offsets[-max_tokens][0]:]

    return by_tokens if tokenizer is not None else (lambda text: text[-4 * max_tokens:])


def _score_jobs(jobs, rollouts, scorer, max_variants, n_head, head_weight) -> list[tuple[float, float]]:
    """One batched scorer call; per job (s_real, mean s_rand) of the best gold variant."""
    contexts, targets, index = [], [], []
    for j, (i, _, ctxs) in enumerate(jobs):
        for v, gold in enumerate(rollouts[i].golden_answers[:max_variants]):
            for c, ctx in enumerate(ctxs):
                contexts.append(ctx)
                targets.append(gold)
                index.append((j, v, c))
    logprobs = scorer.score(contexts, targets) if contexts else []
    table: dict[tuple[int, int], list[float]] = {}
    for (j, v, c), lp in zip(index, logprobs):
        table.setdefault((j, v), []).append(head_weighted_mean(lp, n_head, head_weight))
    out = []
    for j in range(len(jobs)):
        variants = [table[k] for k in sorted(table) if k[0] == j]
        best = max(variants, key=lambda s: s[0])  # the variant with the highest REAL score
        out.append((best[0], float(np.mean(best[1:]))))
    return out


def _assemble(rollouts, parsed, jobs, scores, agg) -> list[dict[str, Any]]:
    by_step = {(i, t): sc for (i, t, _), sc in zip(jobs, scores)}
    results = []
    for i, (_, steps) in enumerate(parsed):
        offsets = rollouts[i].turn_offsets or [0]
        rows = []
        for t, s in enumerate(steps):
            real, base = by_step.get((i, t), (None, None))
            ig = None if real is None else real - base
            turn = max(k for k, o in enumerate(offsets) if o <= s.query_start)
            rows.append({"step": t, "turn": turn, "ig": ig, "skipped": ig is None,
                         "logp_real": real, "logp_baseline": base,
                         "span": {"kind": "query", "start": s.query_start - offsets[turn],
                                  "end": s.query_end - offsets[turn], "value": ig}})
        values = [r["ig"] for r in rows if r["ig"] is not None]
        results.append({"steps": rows, "ig": float(agg(values)) if values else 0.0})
    return results


def ig_diagnostics(results: Sequence[dict[str, Any]]) -> dict[str, float]:
    """`ig/step_mean|std|max|min`, `ig/positive_ratio`, `ig/logp_real_mean`, `ig/logp_baseline_mean`."""
    rows = [r for res in results for r in res["steps"] if r["ig"] is not None]
    out = {"ig/n_steps": float(len(rows)),
           "ig/n_skipped": float(sum(r["skipped"] for res in results for r in res["steps"]))}
    if rows:
        ig = np.array([r["ig"] for r in rows])
        out.update({"ig/step_mean": float(ig.mean()), "ig/step_std": float(ig.std()),
                    "ig/step_max": float(ig.max()), "ig/step_min": float(ig.min()),
                    "ig/positive_ratio": float((ig > 0).mean()),
                    "ig/logp_real_mean": float(np.mean([r["logp_real"] for r in rows])),
                    "ig/logp_baseline_mean": float(np.mean([r["logp_baseline"] for r in rows]))})
    return out


# ---- IG on the token ids the policy saw (what the trainer uses) ---------------------------

@dataclass
class TokenStep:
    """One search step of a recorded trajectory, located in its token sequence.

    `block` is step t's swappable block: the environment's documents observation (the ids
    the engine spliced in after `</search>`) followed by the model's next action up to the end
    of its first `<refine>` (nothing of that action when it wrote none). Documents therefore
    always come from the environment, never from text the model wrote."""

    turn: int
    docs_start: int  # index in the trajectory's token sequence where the block starts
    block: list[int]
    doc_text: str
    has_refine: bool


def token_steps(traj: Any, decode: Callable[[Sequence[int]], str]) -> tuple[list[int], list[TokenStep]]:
    """(the trajectory's token sequence, its IG steps). A search turn whose documents never
    reached the policy (the episode ended, or retrieval failed) is not a step."""
    from envgym.tokens import char_to_token_spans

    ids: list[int] = []
    starts = []
    for turn in traj.turns:
        starts.append(len(ids))
        ids += list(turn.obs_token_ids) + list(turn.action_token_ids)
    steps = []
    for t, turn in enumerate(traj.turns[:-1]):
        if not any(s.kind == "query" for s in turn.spans) or "retrieval_error" in turn.info:
            continue
        nxt = traj.turns[t + 1]
        doc_text = _TAG.sub("", "".join(m.get("content", "") for m in nxt.observation)).strip()
        refine = _refine_after(nxt.action)
        n_refine = 0
        if refine and nxt.action_token_ids:
            start = nxt.action.find(refine)
            (_, n_refine), = char_to_token_spans(decode, nxt.action_token_ids,
                                                 [(start, start + len(refine))])
        block = list(nxt.obs_token_ids) + list(nxt.action_token_ids[:n_refine])
        steps.append(TokenStep(t, starts[t + 1], block, doc_text, n_refine > 0))
    return ids, steps


def information_gain_ids(trajs: Sequence[Any], scorer: Any, golden: Sequence[Sequence[str]], *,
                         n_random: int = 3, max_context_tokens: int = 4096,
                         max_gold_variants: int = 1, n_head_tokens: int = 3,
                         head_weight: float = 3.0, aggregate: str = "mean",
                         min_doc_chars: int = 10, seed: int = 0) -> list[dict[str, Any]]:
    """`information_gain` on recorded token ids: C_t^real is the trajectory's own token
    sequence (chat template, spliced observations and all) up to the end of step t's block;
    C_t^rand,j is the same prefix with only that block replaced by the block of a step of
    another step (documents and refinement jointly, from the batch-wide pool), never one whose
    token ids equal step t's own block (content, not question id: two questions can retrieve
    the same passages, and sibling rollouts usually do); a step is skipped when no other
    block is left. Each context is followed by
    the ids of "\\n<answer> " and scored on the gold answer's ids.

    `scorer` needs `chat.encode` and `score_ids(pairs)` (hf); a text-only scorer gets the
    decoded contexts through `score` instead. Results have `information_gain`'s shape, with
    `turn` the search turn whose query span the value belongs to."""
    chat = scorer.chat
    agg = {"mean": np.mean, "sum": np.sum, "max": np.max}[aggregate]
    parsed = [token_steps(t, chat.decode) for t in trajs]
    pool = [(i, k, s.block) for i, (_, steps) in enumerate(parsed) for k, s in enumerate(steps)
            if len(s.doc_text) >= min_doc_chars]
    rng = np.random.default_rng(seed)
    tail = chat.encode(ANSWER_PREFIX)
    jobs: list[tuple[int, int, list[list[int]]]] = []
    for i, (ids, steps) in enumerate(parsed):
        for k, s in enumerate(steps):
            # blocks that differ from the real one in content (the released code drops
            # identical pairs): an identical block would make that baseline term IG ≡ 0
            others = [p for p in pool if p[2] != s.block]
            if len(s.doc_text) < min_doc_chars or not others:
                continue
            picks = rng.choice(len(others), size=n_random, replace=len(others) < n_random)
            head = ids[:s.docs_start]
            contexts = [head + s.block] + [head + others[j][2] for j in picks]
            jobs.append((i, k, [c[-max_context_tokens:] + tail for c in contexts]))
    scores = _score_id_jobs(jobs, golden, scorer, max_gold_variants, n_head_tokens, head_weight)
    by_step = {(i, k): sc for (i, k, _), sc in zip(jobs, scores)}
    results = []
    for i, (_, steps) in enumerate(parsed):
        rows = []
        for k, s in enumerate(steps):
            real, base = by_step.get((i, k), (None, None))
            ig = None if real is None else real - base
            rows.append({"step": k, "turn": s.turn, "ig": ig, "skipped": ig is None,
                         "logp_real": real, "logp_baseline": base, "refine": s.has_refine})
        values = [r["ig"] for r in rows if r["ig"] is not None]
        results.append({"steps": rows, "ig": float(agg(values)) if values else 0.0})
    return results


def _score_id_jobs(jobs, golden, scorer, max_variants, n_head, head_weight):
    """One batched scoring call; per job (s_real, mean s_rand) of the best gold variant."""
    chat = scorer.chat
    pairs, index = [], []
    for j, (i, _, contexts) in enumerate(jobs):
        for v, gold in enumerate(list(golden[i])[:max_variants]):
            target = chat.encode(gold)
            for c, ctx in enumerate(contexts):
                pairs.append((ctx, target))
                index.append((j, v, c))
    if not pairs:
        return []
    if hasattr(scorer, "score_ids"):
        logprobs = scorer.score_ids(pairs)
    else:  # a text-only scorer: the same contexts, decoded
        logprobs = scorer.score([chat.decode(c) for c, _ in pairs], [chat.decode(t) for _, t in pairs])
    table: dict[tuple[int, int], list[float]] = {}
    for (j, v, _), lp in zip(index, logprobs):
        table.setdefault((j, v), []).append(head_weighted_mean(lp, n_head, head_weight))
    out = []
    for j in range(len(jobs)):
        best = max((table[k] for k in sorted(table) if k[0] == j), key=lambda s: s[0])
        out.append((best[0], float(np.mean(best[1:]))))
    return out

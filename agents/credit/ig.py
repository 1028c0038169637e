"""IG-Search: per-token modulation of query-span tokens by the step's information gain.

The paper does not publish the IG -> advantage mapping (methods.md §1.4); this form is ours,
with every choice a parameter.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from envgym.agents.credit.base import CreditBatch, group_key
from envgym.trajectory import Turn


def token_char_offsets(ids: list[int], tokenizer: Any) -> list[tuple[int, int]]:
    """(start, end) character offsets of each token in `decode(ids)`, by prefix decoding."""
    offsets, prev = [], 0
    for k in range(len(ids)):
        end = max(prev, len(tokenizer.decode(ids[: k + 1])))
        offsets.append((prev, end))
        prev = end
    return offsets


def span_token_mask(turn: Turn, span: Any, tokenizer: Any) -> np.ndarray:
    """Tokens of `turn`'s action that overlap the span's characters [start, end); the engine's
    own token range (`token_start`, `token_end`) is used when it recorded one."""
    n = len(turn.action_token_ids)
    lo, hi = getattr(span, "token_start", None), getattr(span, "token_end", None)
    if lo is not None and hi is not None:
        return (np.arange(n) >= lo) & (np.arange(n) < hi)
    start, end = span.start, span.end
    if tokenizer is None:
        raise ValueError("credit `ig` maps character spans to tokens and needs the tokenizer "
                         "(the trainer passes the policy's)")
    offsets = token_char_offsets(turn.action_token_ids, tokenizer)
    return np.array([s < end and e > start for s, e in offsets], dtype=bool)


SCORER_OPTIONS = ("n_random", "max_context_tokens", "max_gold_variants", "n_head_tokens",
                  "head_weight", "aggregate", "min_doc_chars")


def scorer_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """The `[credit_options.ig]` keys that configure the IG scorer (methods §1.6: N, left
    truncation, gold variants, head weighting, aggregate, minimum document length); the
    trainer passes them to `attach_ig`, the rest are the advantage mapping's."""
    return {k: v for k, v in (options or {}).items() if k in SCORER_OPTIONS}


def ig(batch: CreditBatch, *, alpha: float = 1.0, clip: float = 1.0, scope: str = "group",
       center: bool = True, kind: str = "query", std_floor: float = 0.1,
       eps: float = 1e-6, n_random: int = 3, max_context_tokens: int = 4096,
       max_gold_variants: int = 1, n_head_tokens: int = 3, head_weight: float = 3.0,
       aggregate: str = "mean", min_doc_chars: int = 10) -> CreditBatch:
    """A_{i,k} = A_i + alpha * clip(norm(IG_{i,t}), -clip, clip) on tokens k of query spans.

    IG_{i,t} is `span.value` of each span of kind `kind` (the information gain of that search
    step, in nats). norm is a z-score over all query spans of the group (`scope="group"`) or
    of the batch (`scope="batch"`), with the spread floored:

        norm(IG) = (IG - mean) / max(std, std_floor)          (population std)

    The floor (default 0.1 nats) is what keeps noise from being amplified: a plain z-score
    turns IG values [1.0, 1.0001] into ±1, here they give ±0.0005. With `center=False` the
    mean is not removed, so every positive IG still pushes its query up when all IGs are
    alike; `scope="none"` uses the raw IG. Tokens outside query spans keep A_i. This is what
    keeps a gradient in groups where every rollout failed (A_i = 0).

    `n_random` .. `min_doc_chars` configure the scorer that computed IG (`scorer_options`,
    read by the trainer's `attach_ig`; defaults are the released code's); they are accepted
    here so that every IG option is settable from `[credit_options.ig]`.

    Logged: spans and tokens modulated, mean |bonus|, and `ig/all_wrong_groups` with
    `ig/all_wrong_with_signal` (the share of all-wrong groups where some query got a bonus,
    i.e. where IG adds gradient that the outcome reward cannot).
    """
    adv = batch.require_advantages("ig")
    if std_floor < 0:
        raise ValueError(f"credit `ig`: std_floor must be >= 0, not {std_floor}")
    spans: list[tuple[int, int, Any, float]] = []  # (i, t, span, value)
    for i, traj in enumerate(batch.trajectories):
        for t, turn in enumerate(traj.turns):
            spans += [(i, t, s, float(s.value)) for s in turn.spans
                      if s.kind == kind and s.value is not None]
    scopes: dict[Any, list[int]] = defaultdict(list)
    for n, (i, *_rest) in enumerate(spans):
        scopes[group_key(batch.trajectories[i]) if scope == "group" else "all"].append(n)
    norm = np.array([v for *_rest, v in spans], dtype=np.float64)
    if scope in ("group", "batch"):
        for members in scopes.values():
            v = norm[members]
            mean = v.mean() if center else 0.0
            norm[members] = (v - mean) / max(v.std(), std_floor, eps)
    elif scope != "none":
        raise ValueError(f"credit `ig`: scope must be 'group', 'batch' or 'none', not {scope!r}")
    bonus = alpha * np.clip(norm, -clip, clip)
    touched = 0
    for (i, t, span, _), b in zip(spans, bonus):
        mask = span_token_mask(batch.trajectories[i].turns[t], span, batch.tokenizer)
        adv[i][t] = adv[i][t] + b * mask
        touched += int(mask.sum())
    batch.stats["ig/spans"] = float(len(spans))
    batch.stats["ig/modulated_tokens"] = float(touched)
    batch.stats["ig/bonus_abs_mean"] = float(np.abs(bonus).mean()) if len(bonus) else 0.0
    batch.stats.update(_all_wrong_signal(batch, spans, bonus))
    return batch


def _all_wrong_signal(batch: CreditBatch, spans: list, bonus: np.ndarray) -> dict[str, float]:
    """How many groups failed entirely, and the share of them that IG still gives a signal."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, traj in enumerate(batch.trajectories):
        groups[group_key(traj)].append(i)
    wrong = {g for g, idx in groups.items()
             if not any(batch.trajectories[i].success for i in idx)}
    signal = {group_key(batch.trajectories[i]) for (i, *_rest), b in zip(spans, bonus)
              if abs(b) > 1e-6} & wrong
    return {"ig/all_wrong_groups": float(len(wrong)),
            "ig/all_wrong_with_signal": len(signal) / len(wrong) if wrong else 0.0}

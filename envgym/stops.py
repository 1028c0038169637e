"""Stop sequences: an action ends at the first stop string, whatever the backend did.

An environment declares `stop_sequences` (Search-v0: `</search>`, `</answer>`). Backends are
asked to stop there (`SamplingParams.stop`), but a server may ignore the field and a sampled
token may cross the stop string, so the engine enforces the cut itself on every completion:

* the ids (and their log-probs) are cut after the token that completes the first stop, so
  nothing sampled after it is trained;
* the text handed to the environment is cut right after the stop string, so nothing the model
  wrote after it (a self-written `<information>` block, a second query) is ever parsed.

When the completing token itself runs past the stop (a merged `>\\n` token), the ids keep
that token whole: ids are never re-tokenised, so `decode(ids)` may end a few characters past
`text`. A cut completion has `finish_reason == "stop"` and `ended_with_eos` False.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from envgym.policy import Completion, SamplingParams

__all__ = ["cut_at_stop", "first_stop_end", "with_stops"]


def first_stop_end(text: str, stops: Sequence[str]) -> int | None:
    """Character index just after the earliest-ending stop string in `text`, or None."""
    ends = [i + len(s) for s in stops if s and (i := text.find(s)) != -1]
    return min(ends) if ends else None


def with_stops(sampling: SamplingParams, stops: Sequence[str]) -> SamplingParams:
    """`sampling` with `stops` added to its stop strings (order kept, no duplicates)."""
    merged = tuple(dict.fromkeys((*sampling.stop, *stops)))
    return sampling if merged == sampling.stop else replace(sampling, stop=merged)


def cut_at_stop(completion: Completion, stops: Sequence[str],
                decode: Callable[[Sequence[int]], str] | None) -> Completion:
    """The completion up to and including the first stop string (unchanged if none)."""
    end = first_stop_end(completion.text, stops)
    if end is None:
        return completion
    ids, logprobs = list(completion.token_ids), list(completion.logprobs)
    if ids and decode is not None:
        n = _tokens_covering(ids, end, decode)
        ids, logprobs = ids[:n], logprobs[:n]
    return Completion(completion.text[:end], ids, logprobs, "stop", False)


def _tokens_covering(ids: list[int], end: int, decode: Callable[[Sequence[int]], str]) -> int:
    """The fewest leading tokens whose text reaches character `end` (binary search)."""
    lo, hi = 1, len(ids)
    if len(decode(ids)) < end:
        return len(ids)
    while lo < hi:
        mid = (lo + hi) // 2
        if len(decode(ids[:mid])) >= end:
            hi = mid
        else:
            lo = mid + 1
    return lo

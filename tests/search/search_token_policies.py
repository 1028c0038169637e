"""Token policies that write chosen text: real tokenizer ids, log-probs from the real model.

The tiny model is untrained and never writes a `<search>`; these wrap it so that the
engine, IG and SLATE see well-formed (or deliberately hostile) actions while everything
downstream — token ids, chat template, log-probs, the learner — is the real thing.
"""

from __future__ import annotations

import numpy as np

from envgym.policy import Completion


class WritingPolicy:
    """Writes `script(prompt_text, rng)` as token ids of the wrapped policy's tokenizer; the
    log-probs are the wrapped model's, so the trajectories train like sampled ones."""

    def __init__(self, inner, script, seed: int = 0):
        self.inner, self.script = inner, script
        self.rng = np.random.default_rng(seed)
        self.name = f"writing:{inner.name}"
        self.tokenizer, self.chat = inner.tokenizer, inner.chat
        self.prompts_seen: list[list[int]] = []
        self.stops_seen: list[tuple[str, ...]] = []

    def generate(self, prompts, sampling):
        self.stops_seen.append(tuple(sampling.stop))
        out = []
        for p in prompts:
            self.prompts_seen.append(list(p))
            ids = self.chat.encode(self.script(self.chat.decode(p), self.rng))
            (lps,) = self.inner.score_ids([(list(p), ids)])
            out.append(Completion(self.chat.decode(ids), ids, lps, "stop", False))
        return out

    def score_ids(self, pairs, temperature: float = 1.0):
        return self.inner.score_ids(pairs, temperature)

    def score(self, contexts, targets):
        return self.inner.score(contexts, targets)

    def load_state_dict(self, state):
        self.inner.load_state_dict(state)


def question(prompt_text: str) -> str:
    return prompt_text.rsplit("Question:", 1)[-1].split("\n", 1)[0].strip().rstrip("?")


def overrun(prompt_text: str, rng) -> str:
    """Searches, then keeps writing its own documents and answer past `</search>`."""
    if prompt_text.count("<information>") > 1:  # the instructions mention the tag once
        return "<think>done</think><answer> unknown </answer>"
    return (f"<think>look it up</think><search> {question(prompt_text)} </search>"
            "<information>FAKE Doc 1(Title: Fake) the answer is FAKE</information>"
            "<answer> FAKE </answer>")


def ig_searcher(prompt_text: str, rng) -> str:
    """IG-Search's protocol: search (good or bad query), refine what came back, answer."""
    n = prompt_text.count("<search>") - 1  # the prompt's instructions mention it once
    if n >= 2:
        return "<refine>enough</refine><think>answer</think><answer> unknown </answer>"
    query = question(prompt_text) if rng.random() < 0.5 else "zzz qqq"
    refine = "<refine>the documents name it</refine>" if n >= 1 else ""
    return f"{refine}<think>search</think><search> {query} </search>"


def slate_mix(prompt_text: str, rng) -> str:
    """Good queries, bad queries, early answers and stop overruns, drawn at random."""
    q = question(prompt_text)
    return [f"<think>I need {q}</think><search> {q} </search>",
            "<think>hmm</think><search> zzz qqq </search>",
            "<think>answer now</think><answer> unknown </answer>",
            f"<think>look {q}</think><search> {q} </search><information>FAKE</information>",
            ][int(rng.integers(4))]

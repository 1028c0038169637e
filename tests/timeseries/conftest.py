"""A tiny model whose controller is steered and whose reasoner samples for real.

The untrained tiny model never writes a valid zoom, so none of its episodes would reach a
reasoner answer. `SteeredController` wraps the real `HFPolicy`: rows sampled at the
controller's temperature are written from a script (a valid zoom, junk, ACCEPT, a direct
answer; real tokenizer ids, log-probs scored by the real model at that row's temperature),
rows at any other temperature (the reasoner's answers) are sampled by the model itself. The
engine, the forks, the trainer and the learner downstream are the real thing.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from envgym.policy import Completion, SamplingParams, row_sampling

ANSWER_DUE = ("Zooming stopped", "Now answer")


class SteeredController:
    per_row_sampling = True

    def __init__(self, inner, controller_temperature: float, seed: int = 0):
        self.inner, self.controller_t = inner, controller_temperature
        self.rng = np.random.default_rng(seed)
        self.name = f"steered:{inner.name}"
        self.tokenizer, self.chat, self.model = inner.tokenizer, inner.chat, inner.model
        self.rows_by_temperature: dict[float, int] = {}

    def generate(self, prompts, sampling):
        rows = row_sampling(sampling, len(prompts))
        out: list[Completion | None] = [None] * len(prompts)
        real = [i for i, r in enumerate(rows) if r.temperature != self.controller_t]
        for r in rows:
            self.rows_by_temperature[r.temperature] = self.rows_by_temperature.get(
                r.temperature, 0) + 1
        if real:
            done = self.inner.generate([prompts[i] for i in real], [rows[i] for i in real])
            for i, c in zip(real, done, strict=True):
                out[i] = c
        for i, (p, r) in enumerate(zip(prompts, rows, strict=True)):
            if out[i] is None:
                ids = self.chat.encode(self.script(self.chat.decode(p)))
                (lps,) = self.inner.score_ids([(list(p), ids)], r.temperature)
                out[i] = Completion(self.chat.decode(ids), ids, lps, "stop", False)
        return out

    def script(self, prompt: str) -> str:
        """By the prompt's state: answer when due; before a valid zoom, zoom or junk (a
        failed first-segment try); after one, ACCEPT, junk (an invalid round), a direct
        answer or another zoom."""
        last = prompt.rsplit("<|im_start|>", 2)[-2]
        if any(m in last for m in ANSWER_DUE):
            return "<think>the values</think><answer>A</answer>"
        valid = "<|im_start|>tool" in prompt  # the tool answered a valid zoom
        u = self.rng.random()
        if not valid:
            return "junk" if u < 0.3 else "<think>look</think><zoom>[10, 60]</zoom>"
        if u < 0.4:
            return "<think>enough</think><answer>ACCEPT</answer>"
        if u < 0.6:
            return "no idea"
        if u < 0.8:
            return "<think>direct</think><answer>B</answer>"
        return "<think>look</think><zoom>[100, 140]</zoom>"

    def score_ids(self, pairs, temperature: float = 1.0):
        return self.inner.score_ids(pairs, temperature)

    def score(self, contexts, targets):
        return self.inner.score(contexts, targets)

    def load_state_dict(self, state):
        self.inner.load_state_dict(state)


@pytest.fixture(scope="session")
def artist_model(tmp_path_factory):
    from envgym.agents.tiny import build_tiny_model

    torch.set_num_threads(1)  # the CI box is shared
    return build_tiny_model(tmp_path_factory.mktemp("artist") / "m", hidden_size=48, layers=1,
                            include_envs=False)


@pytest.fixture()
def steered(artist_model):
    """`steered(controller_temperature, seed)`: a fresh steered policy on the tiny model."""
    from envgym.policy import load_policy

    def make(controller_temperature: float = 1.0, seed: int = 0, inner=None):
        inner = inner or load_policy(f"hf:{artist_model}", device="cpu", threads=1)
        return SteeredController(inner, controller_temperature, seed)
    return make


__all__ = ["SamplingParams", "SteeredController"]

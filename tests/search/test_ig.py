import math

import pytest
import torch

from envgym.environments.search.ig import (IGRollout, head_weighted_mean, ig_diagnostics,
                                           information_gain, parse_steps)


class CharScorer:
    """A real Scorer over a tiny random Llama with a character-level vocabulary."""

    def __init__(self):
        from transformers import LlamaConfig, LlamaForCausalLM

        torch.manual_seed(0)
        cfg = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=2048)
        self.model = LlamaForCausalLM(cfg).eval()

    @staticmethod
    def ids(text):
        return [ord(c) % 128 for c in text]

    @torch.no_grad()
    def score(self, contexts, targets):
        out = []
        for c, t in zip(contexts, targets):
            ids = torch.tensor([self.ids(c + t)])
            logp = torch.log_softmax(self.model(ids).logits[0].double(), -1)
            n = len(self.ids(c))
            out.append([logp[n - 1 + k, ids[0, n + k]].item() for k in range(len(t))])
        return out


def rollout(query, docs, refine, answer="x"):
    response = (f"<think>go</think>\n<search> {query} </search>\n<documents>{docs}</documents>\n"
                f"<refine>{refine}</refine>\n<answer>{answer}</answer>")
    return IGRollout("Q: who? ", response, ["Ann"])


def test_parse_steps_pairs_documents_with_refine_and_marks_query():
    r = rollout("alpha", "Doc 1 text long enough", "keep alpha")
    prefix, (step,) = parse_steps(r.response)
    assert prefix == "<think>go</think>\n"
    assert r.response[step.query_start:step.query_end] == "alpha"
    assert step.documents_block == "<documents>Doc 1 text long enough</documents>"
    assert step.refine_block == "<refine>keep alpha</refine>"
    _, (a, b) = parse_steps("<search>a</search><documents></documents><search>b</search>"
                            "<documents>d is here</documents><refine>r unclosed\n<answer>z")
    assert a.skipped and not b.skipped and b.refine_block == "<refine>r unclosed"


def test_head_weighting_renormalised_to_mean_one():
    # weights 3,3,3,1 -> mean 2.5 -> (3a+3b+3c+d)/10
    assert head_weighted_mean([-1, -2, -3, -4]) == pytest.approx((-3 - 6 - 9 - 4) / 10)
    assert head_weighted_mean([-2, -4]) == pytest.approx(-3)


def test_ig_matches_hand_computation_on_tiny_model():
    scorer = CharScorer()
    a = rollout("who is Ann", "Ann is the answer here", "Ann")
    b = rollout("weather", "It rains in the valley", "rain")
    res = information_gain([a, b], scorer, n_random=3)
    # By hand: b's pair is the only other pool entry, so all 3 counterfactuals of a use it.
    real = ("Q: who? <think>go</think>\n<search> who is Ann </search>\n"
            "<documents>Ann is the answer here</documents>\n<refine>Ann</refine>\n<answer> ")
    rand = ("Q: who? <think>go</think>\n<search> who is Ann </search>\n"
            "<documents>It rains in the valley</documents>\n<refine>rain</refine>\n<answer> ")
    lp_real, lp_rand = scorer.score([real, rand], ["Ann", "Ann"])
    assert len(lp_real) == 3  # three answer tokens: all head tokens, weights equal
    expected = sum(lp_real) / 3 - sum(lp_rand) / 3
    step = res[0]["steps"][0]
    assert step["ig"] == pytest.approx(expected, abs=1e-9) and expected != 0
    assert res[0]["ig"] == pytest.approx(expected)
    span = step["span"]
    assert a.response[span["start"]:span["end"]] == "who is Ann" and span["value"] == step["ig"]


class LookupScorer:
    """log p = -0.1 per token if the gold is in the context, else -2: a transparent model."""

    def score(self, contexts, targets):
        return [[-0.1 if t in c else -2.0] * 2 for c, t in zip(contexts, targets)]


def test_signal_when_every_rollout_answered_wrongly_and_diagnostics():
    group = [rollout("q1", "Ann lives by the sea", "Ann", answer="Bob"),
             rollout("q2", "Nothing relevant here", "no", answer="Cy"),
             rollout("q3", "Still nothing relevant", "no", answer="Di")]
    res = information_gain(group, LookupScorer(), n_random=2, seed=1)
    igs = [r["ig"] for r in res]
    assert igs[0] == pytest.approx(-0.1 + 2.0)  # both counterfactuals lack "Ann"
    assert any(v != 0 for v in igs)
    d = ig_diagnostics(res)
    assert d["ig/n_steps"] == 3 and 0 < d["ig/positive_ratio"] <= 1
    assert d["ig/step_max"] == pytest.approx(1.9)


def test_short_documents_are_excluded_from_the_pool_and_steps_without_pool_skip():
    group = [rollout("q1", "Ann lives by the sea", "Ann"), rollout("q2", "tiny", "no")]
    res = information_gain(group, LookupScorer(), n_random=3)
    # the only candidate for step 0 of rollout 0 has < 10 characters: skipped, not crashed
    assert res[0]["steps"][0]["skipped"] and res[0]["ig"] == 0.0
    assert res[1]["steps"][0]["ig"] == pytest.approx(-2.0 - -0.1)


def test_left_truncation_by_tokens_and_turn_mapping():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, **{c: i + 1 for i, c in enumerate("abcdefghijklmnopqrstuvwxyz<>/ ")}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok)

    seen = []

    class Spy(LookupScorer):
        def score(self, contexts, targets):
            seen.extend(contexts)
            return super().score(contexts, targets)

    r1 = IGRollout.from_steps("P " * 50, ["<think>t</think><search>ann</search>"],
                              ["<documents>Ann is the one</documents>"], ["Ann"])
    r2 = rollout("q", "Different material", "x")
    res = information_gain([r1, r2], Spy(), max_context_tokens=20, tokenizer=fast)
    assert all(len(c) <= 20 + len("\n<answer> ") for c in seen)
    step = res[0]["steps"][0]
    assert step["turn"] == 0 and r1.response[step["span"]["start"]:step["span"]["end"]] == "ann"

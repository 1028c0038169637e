"""SFT's loss (head only at action positions, minibatches trimmed) equals the full-logits
NLL, in value and in gradient."""

from __future__ import annotations

import copy

import torch

from envgym.agents.learner import build_batch, naive_token_logprobs
from envgym.agents.sft import _trim, action_nll, sft
from envgym.trajectory import Trajectory, Turn


def _model():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    return Qwen2ForCausalLM(Qwen2Config(vocab_size=50, hidden_size=16, intermediate_size=32,
                                        num_hidden_layers=1, num_attention_heads=2,
                                        num_key_value_heads=1, tie_word_embeddings=True))


def _trajs() -> list[Trajectory]:
    def turn(obs, act):
        return Turn(observation=[], action="a", obs_token_ids=obs, action_token_ids=act)

    return [Trajectory(env_id="x/Y-v0", task_id="t0", turns=[turn([1, 2, 3, 4], [5, 6]),
                                                                 turn([7, 8], [9])]),
            Trajectory(env_id="x/Y-v0", task_id="t1", turns=[turn([3, 2, 1], [11, 12, 13])])]


def test_action_nll_matches_full_logits_in_value_and_gradient():
    model = _model()
    batch = build_batch(_trajs())
    logp, _ = naive_token_logprobs(model, batch)
    full = -(logp * batch.loss_mask).sum()
    fast, n = action_nll(model, _trim(batch))
    assert n == int(batch.loss_mask.sum()) == 6
    assert torch.allclose(full, fast, atol=1e-5)
    g_full = torch.autograd.grad(full, list(model.parameters()))
    g_fast = torch.autograd.grad(fast, list(model.parameters()))
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(g_full, g_fast, strict=True))


def test_trim_drops_only_all_padding_columns():
    wide = build_batch(_trajs())  # rows of 9 and 6 tokens, then 5 more padding columns
    wide = type(wide)(*(torch.nn.functional.pad(getattr(wide, f), (0, 5))
                        for f in wide.__dataclass_fields__))
    cut = _trim(wide)
    assert cut.input_ids.shape[1] == 9 == int(wide.attention_mask.sum(-1).max())
    assert torch.equal(cut.loss_mask, wide.loss_mask[:, :9])
    assert torch.equal(cut.input_ids, wide.input_ids[:, :9])


def test_sft_lowers_the_action_loss():
    model = _model()
    before = copy.deepcopy(model)
    losses = sft(model, _trajs() * 4, epochs=8, batch_size=4, lr=1e-2)
    assert len(losses) == 8 and losses[-1] < 0.5 * losses[0]
    assert any(not torch.equal(a, b) for a, b in zip(model.parameters(), before.parameters(), strict=True))


def test_final_turn_weight_scales_only_the_ending_action_of_terminated_episodes():
    from envgym.agents.sft import weight_final_turns

    trajs = _trajs()
    trajs[0] = trajs[0].model_copy(update={"terminated": True})  # ends with its answer, [9]
    batch = build_batch(trajs)
    weighted = weight_final_turns(batch, trajs, 5.0)
    row0 = weighted.loss_mask[0].tolist()
    assert row0 == [0, 0, 0, 0, 1, 1, 0, 0, 5.0]  # obs, action [5, 6], obs, answer [9]
    assert torch.equal(weighted.loss_mask[1], batch.loss_mask[1])  # truncated: left alone
    assert weight_final_turns(batch, trajs, 1.0) is batch


def test_sft_with_final_turn_weight_learns_the_answer_faster():
    """The same data, seed and steps: weighting the answer lowers its loss more than the
    unweighted mean does, which is the point of the setting."""
    trajs = [t.model_copy(update={"terminated": True}) for t in _trajs()]
    answer_only = [t.model_copy(update={"turns": [
        t.turns[-1].model_copy(update={"obs_token_ids": sum(
            (u.obs_token_ids + u.action_token_ids for u in t.turns[:-1]), [])
            + t.turns[-1].obs_token_ids})]}) for t in trajs]
    score = {}
    for weight in (1.0, 20.0):
        model = _model()
        sft(model, trajs * 2, epochs=3, batch_size=4, lr=3e-3, final_turn_weight=weight)
        nll, n = action_nll(model, build_batch(answer_only))
        score[weight] = float(nll) / n
    assert score[20.0] < score[1.0]

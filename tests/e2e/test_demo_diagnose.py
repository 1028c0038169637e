"""bench/demo_diagnose.py's `stats` (docs/demo.md, development attempt 3): the numbers the
diagnosis rests on are computed as it says."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import demo_diagnose  # noqa: E402

from envgym.agents.base_probes import common_prefix  # noqa: E402


def _row(step, seed, reward, coverage, answer="A", score=0.0, zoom="[1, 2]"):
    return {"step": step, "seed": seed, "R": reward,
            "out": {"answer": answer, "score": score, "chance": 0.25, "coverage": coverage},
            "acts": [f"<think>x</think><zoom>{zoom}</zoom>", f"<answer>{answer}</answer>"]}


def test_one_accuracy_groups_with_cost_spread_get_unit_advantages():
    """Eight rollouts all wrong, rewards apart by 0.001 (a wider zoom's point cost): the group
    is kept (spread > 0), counted as one-accuracy, and its covering rollouts, the costlier
    ones, get a z-scored advantage of about -0.9; an all-equal group is left out."""
    flat = [_row(1, 7, 3.0 - 0.001 * (i < 4), coverage=0.5 * (i < 4)) for i in range(8)]
    tied = [_row(1, 8, 3.0, coverage=0.0) for _ in range(8)]
    (stats,) = demo_diagnose.block_stats(flat + tied)
    assert stats["groups"] == 2 and stats["groups_one_accuracy_trained"] == 1
    assert stats["adv_covering"] == pytest.approx(-0.935, abs=0.01)
    assert stats["adv_not_covering"] == pytest.approx(0.935, abs=0.01)
    assert stats["covering"] == pytest.approx(4 / 16)
    assert stats["above_chance"] == pytest.approx(-0.25)


def test_blocks_split_steps_and_count_zooms():
    rows = [_row(s, 1, float(i), 0.0, answer="AB"[i % 2], score=float(i % 2), zoom=f"[{i}, 9]")
            for s in (1, 11) for i in range(4)]
    first, second = demo_diagnose.block_stats(rows)
    assert (first["steps"], second["steps"]) == ("1-10", "11-20")
    assert first["distinct_first_zooms"] == 4 and first["a_share"] == 0.5
    assert first["groups_one_accuracy_trained"] == 0  # accuracies differ within the group


def test_read_cases_stop_before_the_answer_and_hold_the_evidence():
    """The prefixes end where the heuristic answers (no answer in them), after its zooms, and
    the heuristic's own answers from them beat chance: the evidence a reader needs is there."""
    cases = demo_diagnose._heuristic_prefixes(40)
    assert len(cases) == 40
    for messages, outcome, letters in cases:
        said = [m["content"] for m in messages if m["role"] == "assistant"]
        assert said and all("<answer>" not in a for a in said)
        assert all("<zoom>" in a for a in said) and outcome["gold"] in letters
    assert np.mean([o["score"] - o["chance"] for _, o, _ in cases]) > 0.1


def test_read_scores_a_models_forced_choice():
    """The shipped base picks one letter per case; the per-type means and counts add up to the
    overall score, computed against each case's gold and chance."""
    from envgym.agents.base_model import shipped_base_model

    cases = demo_diagnose._heuristic_prefixes(8)
    got = demo_diagnose.read_one(str(shipped_base_model()), cases)
    assert got["n"] == 8 and sum(got["picks"].values()) == 8
    assert sum(n for _, n in got["per_type"].values()) == 8
    weighted = sum(mean * n for mean, n in got["per_type"].values()) / 8
    assert got["above_chance"] == pytest.approx(weighted, abs=2e-3)
    assert set(got["picks"]) <= {letter for _, _, ls in cases for letter in ls}


def test_read_sampled_is_the_gold_letters_odds_above_chance(tmp_path):
    """`sampled` scores the letter drawn from the model's odds over the options: a model with
    no preference between letters (a fresh initialisation, whose odds are near even) sits at
    chance there, whatever its argmax happens to pick."""
    from transformers import AutoTokenizer

    from envgym.agents.base_model import new_base_model, shipped_base_model

    tok = AutoTokenizer.from_pretrained(str(shipped_base_model()))
    new_base_model(tok, "small", seed=3).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    cases = demo_diagnose._heuristic_prefixes(12)
    got = demo_diagnose.read_one(str(tmp_path), cases)["sampled"]
    assert got["n"] == 12 and sum(n for _, n in got["per_type"].values()) == 12
    assert abs(got["above_chance"]) < 0.03
    base = demo_diagnose.read_one(str(shipped_base_model()), cases)["sampled"]
    assert all(-0.5 <= mean <= 0.75 for mean, _ in base["per_type"].values())


def test_read_scores_the_letter_token_itself():
    """The base's tokenizer merges a letter with the tag's '>' ('>A'): the scored span must
    start at that merged token, where the options part, not after it (a first version scored
    only '</answer>' and saw no difference between letters)."""
    from transformers import AutoTokenizer

    from envgym.agents.base_model import shipped_base_model

    tok = AutoTokenizer.from_pretrained(str(shipped_base_model()))
    head = "<|im_start|>assistant\n<think>x</think><answer>"
    variants = [tok(head + letter + "</answer>").input_ids for letter in "ABCD"]
    start = common_prefix(variants)
    assert len({v[start] for v in variants}) == 4
    assert start < len(tok(head).input_ids)  # the head's last token is not shared with a letter


def test_letter_loss_trains_the_answer_token_only():
    """The answer-only loss of two right-padded rows is the mean of each row's alone (read at
    each row's last real position, not at the padding), and one step on it lowers it."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.base_model import shipped_base_model

    base = str(shipped_base_model())
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    head = "<|im_start|>assistant\n<think>x</think><answer>"
    rows = []
    for letter, extra in (("C", ""), ("D", " and more words before it")):
        variants = [tok("<|im_start|>user\nq" + extra + "<|im_end|>\n" + head + x + "</answer>")
                    .input_ids for x in "ABCD"]
        start = common_prefix(variants)
        gold = variants["ABCD".index(letter)]
        rows.append((gold[:start], gold[start]))
    with torch.no_grad():  # right-padding the short row changes nothing: the batch's loss is
        alone = [float(demo_diagnose._letter_loss(model, [r])) for r in rows]  # the rows' mean
        before = float(demo_diagnose._letter_loss(model, rows))
    assert before == pytest.approx(sum(alone) / 2, rel=1e-4)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    opt.zero_grad()
    demo_diagnose._letter_loss(model, rows).backward()
    opt.step()
    with torch.no_grad():
        assert float(demo_diagnose._letter_loss(model, rows)) < before


def test_run_keeps_the_warm_start_for_read(tmp_path):
    """`run` saves the SFT model before RL moves it: a loadable model with the base's
    tokenizer, whose weights are the fine-tuned ones (not the shipped base's), and the
    rollouts of every training step."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.base_model import shipped_base_model

    demo_diagnose.run(tmp_path, 100, 1, 4, {"sft.episodes": 8, "sft.epochs": 1})
    warm = AutoModelForCausalLM.from_pretrained(tmp_path / "sft_model", dtype=torch.float32)
    base = AutoModelForCausalLM.from_pretrained(shipped_base_model(), dtype=torch.float32)
    moved = [not torch.equal(a, b.float()) for a, b in zip(warm.parameters(), base.parameters())]
    assert any(moved)
    assert len(AutoTokenizer.from_pretrained(tmp_path / "sft_model")) == warm.config.vocab_size
    assert (tmp_path / "train_rollouts.jsonl").read_text().count('"step": 1') >= 8

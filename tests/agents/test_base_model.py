"""`envgym base-model`: tokenizer, pretraining, checkpoints, Ctrl-C and --resume."""

import json

import pytest
import torch

from envgym.agents import base_data
from envgym.agents import base_model as bm


@pytest.fixture(autouse=True)
def _small(monkeypatch):
    """A 200-document tokenizer and a one-layer model: the mechanics, in seconds."""
    monkeypatch.setattr(bm, "TOKENIZER_DOCS", 200)
    monkeypatch.setitem(bm.SHAPES, "test", {"hidden_size": 32, "layers": 1, "heads": 2,
                                            "kv_heads": 1})


def _args(tmp_path, name="run", **kw):
    base = dict(out=str(tmp_path / name), shape="test", batch_size=2, seq_len=32, warmup=2,
                log_every=1, progress=False, steps=4)
    return bm.PretrainArgs(**{**base, **kw})


def test_numbers_are_single_tokens_and_text_round_trips():
    tok = bm.build_base_tokenizer()
    for n in ("0", "7", "42", "512", "999", "05"):
        assert tok.tokenize(n) == [n]
    assert tok.tokenize("1234") == ["123", "4"]
    text = "segment [363, 381]: -0.85 6.36 Déjà 中文 🙂 <answer>C</answer>"
    assert tok.decode(tok(text)["input_ids"]) == text


def test_tokenizer_ignores_the_environment_registry():
    import envgym
    from envgym.registration import _REGISTRY
    before = bm.build_base_tokenizer().get_vocab()
    envgym.register("plugtest/Base-v0", "envgym.environments.timeseries.env:TimeSeriesEnv")
    try:
        assert bm.build_base_tokenizer().get_vocab() == before
    finally:
        _REGISTRY.pop("plugtest/Base-v0", None)


def test_pretrain_writes_model_checkpoint_and_report(tmp_path):
    report = bm.pretrain(_args(tmp_path))
    out = tmp_path / "run"
    assert report["steps"] == 4 and report["tokens"] == 4 * 2 * 32
    saved = json.loads((out / "report.json").read_text())
    assert [p["step"] for p in saved["loss_curve"]] == [1, 2, 3, 4]
    assert saved["versions"]["torch"] == torch.__version__ and saved["args"]["seed"] == 0
    assert (out / "checkpoint" / "trainer_state.pt").is_file()
    from transformers import AutoModelForCausalLM, AutoTokenizer
    model = AutoModelForCausalLM.from_pretrained(out / "model")
    assert model.config.model_type == "qwen2" and model.dtype == torch.bfloat16
    assert len(AutoTokenizer.from_pretrained(out / "model")) == model.config.vocab_size


def _patch_make_batch(monkeypatch, fn):
    """The validation batch is made in base_model, the training stream in base_data."""
    monkeypatch.setattr(bm, "make_batch", fn)
    monkeypatch.setattr(base_data, "make_batch", fn)


def _interrupt_before_step(monkeypatch, step):
    """Ctrl-C while batch `step` is being made (the first make_batch call is the valid batch)."""
    real, calls = bm.make_batch, []

    def interrupt(*args, **kw):
        calls.append(1)
        if len(calls) == step + 1:
            raise KeyboardInterrupt
        return real(*args, **kw)

    _patch_make_batch(monkeypatch, interrupt)
    return real


def test_ctrl_c_then_resume_matches_an_uninterrupted_run(tmp_path, monkeypatch):
    torch.set_num_threads(1)
    whole = bm.pretrain(_args(tmp_path, "whole", steps=5))
    real = _interrupt_before_step(monkeypatch, 3)
    cut = bm.pretrain(_args(tmp_path, "split", steps=5))
    assert cut["interrupted"] and cut["steps"] == 2
    assert (tmp_path / "split/model/config.json").is_file()  # usable as it stands
    _patch_make_batch(monkeypatch, real)
    resumed = bm.pretrain(_args(tmp_path, "split", steps=5), resume=True)
    assert resumed["steps"] == 5 and not resumed["interrupted"]
    assert [p["loss"] for p in resumed["loss_curve"]] == [p["loss"] for p in whole["loss_curve"]]
    a = torch.load(tmp_path / "whole/checkpoint/trainer_state.pt", weights_only=False)
    b = torch.load(tmp_path / "split/checkpoint/trainer_state.pt", weights_only=False)
    assert a["state"]["tokens"] == b["state"]["tokens"]


def test_sigterm_stops_like_ctrl_c(tmp_path, monkeypatch):
    import os
    import signal
    real, calls = bm.make_batch, []

    def term(*args, **kw):
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kw)

    _patch_make_batch(monkeypatch, term)
    before = signal.getsignal(signal.SIGTERM)
    report = bm.pretrain(_args(tmp_path, steps=10))
    assert report["interrupted"] and report["steps"] < 10
    assert (tmp_path / "run/checkpoint/trainer_state.pt").is_file()
    assert signal.getsignal(signal.SIGTERM) == before  # restored


def test_a_save_cut_between_renames_still_resumes(tmp_path):
    bm.pretrain(_args(tmp_path, steps=2))
    out = tmp_path / "run"
    (out / "checkpoint").rename(out / "checkpoint.old")  # killed after the first rename
    assert bm._checkpoint_dir(out) == out / "checkpoint.old"
    assert bm.pretrain(_args(tmp_path, steps=3), resume=True)["steps"] == 3


def test_bad_arguments_say_what_to_do(tmp_path):
    from envgym.errors import InvalidConfig
    with pytest.raises(InvalidConfig, match="not both"):
        bm.PretrainArgs(out=str(tmp_path), steps=3, minutes=1.0)
    assert bm.PretrainArgs(out=str(tmp_path)).minutes == bm.DEFAULT_MINUTES
    with pytest.raises(InvalidConfig, match="unknown shape"):
        bm.PretrainArgs(out=str(tmp_path), steps=3, shape="huge")
    with pytest.raises(InvalidConfig, match="no checkpoint"):
        bm.pretrain(_args(tmp_path, "empty"), resume=True)


def test_init_continues_from_a_models_weights_on_the_chosen_corpus(tmp_path):
    """`--init DIR` starts from DIR's weights (continued pretraining), not a fresh model: its
    first loss is the loss DIR ended on, far below a fresh initialisation's."""
    bm.pretrain(_args(tmp_path, "first", steps=30, corpus_version=1))
    fresh = bm.pretrain(_args(tmp_path, "fresh", steps=1, corpus_version=1))
    cont = bm.pretrain(_args(tmp_path, "cont", steps=1, corpus_version=1,
                             init=str(tmp_path / "first" / "model")))
    assert cont["init"] == str(tmp_path / "first" / "model") and cont["corpus_version"] == 1
    assert cont["loss_curve"][0]["loss"] < fresh["loss_curve"][0]["loss"] - 0.5


def test_init_refuses_a_model_with_another_tokenizer(tmp_path):
    from envgym.agents.tiny import build_tiny_model
    from envgym.errors import InvalidConfig
    tiny = build_tiny_model(tmp_path / "tiny", hidden_size=32, layers=1)
    with pytest.raises(InvalidConfig, match="not the base tokenizer"):
        bm.pretrain(_args(tmp_path, init=str(tiny)))
    with pytest.raises(InvalidConfig, match="no model there"):
        _args(tmp_path, init=str(tmp_path / "nowhere"))
    with pytest.raises(InvalidConfig, match="unknown base corpus version"):
        _args(tmp_path, corpus_version=7)


def _marked(tok, text):
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    keep = bm.answer_mask(text, enc["offset_mapping"])
    return tok.decode([i for i, k in zip(enc["input_ids"], keep) if k])


def test_answer_mask_marks_what_the_assistant_answers_and_nothing_it_was_told():
    tok = bm.build_base_tokenizer()
    chat = ("<|im_start|>system\nAnswer with <answer>LETTER</answer>.<|im_end|>\n"
            "<|im_start|>user\nWhich? A) 3 B) 9<|im_end|>\n"
            "<|im_start|>assistant\n<think>9 is larger.</think><answer>B</answer><|im_end|>\n")
    assert _marked(tok, chat).strip(">") == "B"  # BPE merges the tag's '>' into '>B'
    assert _marked(tok, "Q: 7 + 5?\nA: <answer>12</answer>") == "12"
    assert _marked(tok, "Q: no tags here\nA: 12") == ""


def test_answer_weighted_batches_keep_the_data_order():
    tok = bm.build_base_tokenizer()
    ids, mask = bm.make_batch(tok, 0, 3, 2, 256, 4, answers=True)
    assert torch.equal(ids, bm.make_batch(tok, 0, 3, 2, 256, 4)) and mask.shape == ids.shape
    assert 0 < mask.sum() < ids.numel() // 20


def test_answer_weight_scales_the_answer_tokens_loss():
    """The weighted loss is (sum of other losses + W * sum of answer losses) / (others + W *
    answers), computed here independently; W=1 on a weighted batch is the model's own loss.
    The shipped base, since a fresh model's answer and reading losses are the same."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(bm.shipped_base_model())
    model = AutoModelForCausalLM.from_pretrained(bm.shipped_base_model(), dtype=torch.float32)
    ids, mask = bm.make_batch(tok, 0, 0, 4, 256, 1, answers=True)  # the corpus it knows
    assert mask.sum() > 10
    cpu = torch.device("cpu")
    with torch.no_grad():
        one, plain, _ = bm._step_loss(model, (ids, mask), 1.0, cpu)
        own = model(input_ids=ids, labels=ids).loss
        loss, plain50, answer = bm._step_loss(model, (ids, mask), 50.0, cpu)
        logits = model(input_ids=ids).logits[:, :-1]
        ce = torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:],
                                               reduction="none")
    m = mask[:, 1:]
    expect = (ce[~m].sum() + 50 * ce[m].sum()) / ((~m).sum() + 50 * m.sum())
    assert torch.allclose(one, own, atol=1e-5) and torch.allclose(plain50, own, atol=1e-5)
    assert torch.allclose(loss, expect, atol=1e-5) and not torch.allclose(loss, own, atol=1e-3)
    assert torch.allclose(answer[0] / answer[1], ce[m].mean(), atol=1e-5)
    assert answer[1] == m.sum()  # the count, so windows average over answer tokens
    with torch.no_grad():  # a batch without answers adds nothing to the logged mean
        _, _, none = bm._step_loss(model, (ids, torch.zeros_like(mask)), 50.0, cpu)
    assert none.tolist() == [0.0, 0.0]


def test_answer_weight_logs_the_answer_loss_and_rejects_nonsense(tmp_path):
    from envgym.errors import InvalidConfig
    report = bm.pretrain(_args(tmp_path, steps=2, answer_weight=50.0, corpus_version=4))
    assert all("answer_loss" in p for p in report["loss_curve"])
    assert report["args"]["answer_weight"] == 50.0
    plain = bm.pretrain(_args(tmp_path, "plain", steps=2, corpus_version=4))
    assert not any("answer_loss" in p for p in plain["loss_curve"])
    for bad in (0.0, -2.0, float("nan")):
        with pytest.raises(InvalidConfig, match="answer-weight"):
            _args(tmp_path, answer_weight=bad)

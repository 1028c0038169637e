"""`envgym base-model`: pretrain the offline base model on the generic-skills corpus.

The model is a standard transformers `Qwen2ForCausalLM`, so every backend (HF, vLLM,
`serve-policy`) and the learner load it like any checkpoint. It is pretrained on
`base_corpus` (generic skills, never an environment's tasks), on CPU or CUDA, for a number of
steps or a wall-clock budget, with periodic atomic checkpoints: Ctrl-C saves one and
`--resume` continues from it (same data order, same schedule). `--init DIR` starts from an
existing model's weights instead of a fresh initialisation (continued pretraining, e.g. the
shipped base on a newer corpus version); `--corpus-version` picks the corpus.

**Tokenizer.** Byte-level BPE (any Unicode string round-trips) trained on a fixed, versioned
text set: the tiny model's built-in text plus the first `TOKENIZER_DOCS` documents of corpus
version 1, seed 0 (pinned: a new corpus version trains on the same tokenizer, so a model
continued from the shipped one keeps its vocabulary). Nothing from the environment registry
enters it, so installing a plugin never changes it. Every digit string of one to three digits
("7", "07", "512") is a token of its own, and longer runs split greedily into such chunks. Why:
with one token per digit, ordering two 3-digit numbers needs attention to line up three digit
pairs, which the tiny model never learned; with whole-number tokens a comparison is a lookup
between two learned embeddings, the environments' indices (0-1023) and decimals ("6.36" -> 6 .
36) are two or three tokens, and the zero-padded forms keep fractions like ".05" one token.

**Reports.** `DIR/report.json` (rewritten atomically at every checkpoint) holds the loss
curve, validation loss, tokens/s, model FLOPs utilisation on CUDA (6 N per token plus
attention, against the H200's 989 TFLOP/s dense bf16 spec and against 790 TFLOP/s, a
measured matmul peak), the seed, the command and package versions. `DIR/model` is the final
model in bf16 safetensors (what ships); `DIR/checkpoint` is fp32 with optimizer state.
"""

from __future__ import annotations

import json
import math
import platform
import shutil
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from envgym.agents.base_corpus import CORPUS_VERSION, document
from envgym.agents.base_data import _loader, answer_mask, make_batch  # noqa: F401 (re-exported)

__all__ = ["SHAPES", "TOKENIZER_DOCS", "PretrainArgs", "build_base_tokenizer", "new_base_model",
           "number_tokens", "pretrain", "shipped_base_model"]

DEFAULT_MINUTES = 30.0  # the budget when neither --steps nor --minutes is given
TOKENIZER_DOCS = 3000
TOKENIZER_VERSION = 1
TOKENIZER_CORPUS_VERSION = 1  # the corpus the tokenizer is trained on, whatever the model's
BPE_VOCAB = 2048
VALID_SEED = 999_999  # validation documents come from a seed no training run uses
SPEC_PEAK_FLOPS = 989e12  # H200 dense bf16, datasheet
MEASURED_PEAK_FLOPS = 790e12  # H200 bf16 matmul peak as measured (what MFU is usually against)
SHIPPED = Path(__file__).parent / "base_weights"
# Model shapes: head_dim 64 everywhere (vLLM's CPU attention needs >= 64).
SHAPES: dict[str, dict[str, int]] = {
    "small": {"hidden_size": 128, "layers": 4, "heads": 2, "kv_heads": 1},  # 1.1M parameters
    "base": {"hidden_size": 192, "layers": 4, "heads": 3, "kv_heads": 1},  # 2.2M
    "large": {"hidden_size": 256, "layers": 4, "heads": 4, "kv_heads": 2},  # 3.7M
}


def shipped_base_model() -> Path:
    """The pretrained base shipped with the package (a standard HF directory)."""
    if not (SHIPPED / "config.json").is_file():
        from envgym.errors import InvalidConfig
        raise InvalidConfig(f"the shipped base model is missing from {SHIPPED}; build one with "
                            "`envgym base-model --out DIR` and point model.policy at DIR")
    return SHIPPED


def number_tokens() -> list[str]:
    """Every digit string of length 1-3: '0'..'9', '00'..'99', '000'..'999'."""
    return [f"{i:0{width}d}" for width in (1, 2, 3) for i in range(10 ** width)]


def tokenizer_texts() -> list[str]:
    """The fixed, versioned text set the tokenizer is trained on (module docstring)."""
    from envgym.agents.tiny import _BUILTIN
    return [_BUILTIN, *(document(0, i, TOKENIZER_CORPUS_VERSION) for i in range(TOKENIZER_DOCS))]


def build_base_tokenizer():
    """The base tokenizer: byte-level BPE over `tokenizer_texts()` plus the number tokens."""
    from envgym.agents.tiny import train_tokenizer
    tok = train_tokenizer(tokenizer_texts(), BPE_VOCAB)
    tok.add_tokens(number_tokens())
    return tok


def new_base_model(tokenizer: Any, shape: str = "base", seed: int = 0):
    """A freshly initialised Qwen2 of `SHAPES[shape]` sized to `tokenizer`."""
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    s = SHAPES[shape]
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=s["hidden_size"],
        intermediate_size=s["hidden_size"] * 8 // 3, num_hidden_layers=s["layers"],
        num_attention_heads=s["heads"], num_key_value_heads=s["kv_heads"],
        max_position_embeddings=4096, tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=config.eos_token_id,
                                               pad_token_id=config.pad_token_id)
    return model


# ---- training -------------------------------------------------------------------------------

@dataclass
class PretrainArgs:
    """What `envgym base-model` takes; stored in the checkpoint and the report."""

    out: str
    device: str = "cpu"
    steps: int | None = None
    minutes: float | None = None
    seed: int = 0
    shape: str = "small"
    batch_size: int = 16
    seq_len: int = 512
    lr: float = 2e-3
    warmup: int = 100
    checkpoint_minutes: float = 2.0
    workers: int = 0
    log_every: int = 10
    corpus_version: int = CORPUS_VERSION
    init: str | None = None  # start from this model's weights (continued pretraining)
    answer_weight: float = 1.0  # loss weight of tokens inside <answer>...</answer>
    progress: bool = True
    command: list[str] = field(default_factory=lambda: list(sys.argv))

    def __post_init__(self) -> None:
        from envgym.errors import InvalidConfig
        if self.steps is not None and self.minutes is not None:
            raise InvalidConfig("give one of --steps N or --minutes M, not both")
        if self.steps is None and self.minutes is None:
            self.minutes = DEFAULT_MINUTES
        from envgym.agents.base_corpus import skills
        skills(self.corpus_version)  # an unknown version fails here, before any work
        if self.init is not None and not (Path(self.init) / "config.json").is_file():
            raise InvalidConfig(f"--init {self.init}: no model there (config.json missing)")
        if self.shape not in SHAPES:
            raise InvalidConfig(f"unknown shape {self.shape!r}; choose one of {sorted(SHAPES)}")
        if not (math.isfinite(self.answer_weight) and self.answer_weight > 0):
            raise InvalidConfig(f"--answer-weight must be a positive number, "
                                f"not {self.answer_weight}")


@dataclass
class _State:
    step: int = 0
    tokens: int = 0
    elapsed: float = 0.0
    curve: list[dict[str, float]] = field(default_factory=list)
    valid: list[dict[str, float]] = field(default_factory=list)
    interrupted: bool = False


def _progress(args: PretrainArgs, state: _State) -> float:
    """Fraction of the budget spent: by steps, or by wall time for `--minutes`."""
    if args.steps is not None:
        return state.step / args.steps
    return state.elapsed / (args.minutes * 60)


def _lr(args: PretrainArgs, state: _State) -> float:
    """Linear warm-up, then cosine decay to a tenth over the budget."""
    warm = min(1.0, (state.step + 1) / args.warmup)
    p = min(1.0, _progress(args, state))
    return args.lr * warm * (0.1 + 0.45 * (1 + math.cos(math.pi * p)))


def pretrain(args: PretrainArgs, resume: bool = False) -> dict[str, Any]:
    """Pretrain into `args.out`; returns the report (also `out/report.json`)."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Writing model shards" at every checkpoint says nothing
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = torch.device(args.device)
    ckpt = _checkpoint_dir(out)
    if resume and ckpt is None:
        from envgym.errors import InvalidConfig
        raise InvalidConfig(f"--resume: no checkpoint in {out}")
    if resume:
        model, tokenizer, state, opt_state = _load_checkpoint(ckpt)
    elif args.init is not None:
        model, tokenizer = _load_init(Path(args.init))
        state, opt_state = _State(), None
    else:
        tokenizer = build_base_tokenizer()
        model, state, opt_state = new_base_model(tokenizer, args.shape, args.seed), _State(), None
    model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=device.type == "cuda")
    if opt_state is not None:
        opt.load_state_dict(opt_state)
    valid = make_batch(tokenizer, VALID_SEED, 0, 8, args.seq_len, args.corpus_version).to(device)
    state.interrupted = False
    previous = _stop_on_sigterm()
    try:
        _loop(args, model, tokenizer, opt, state, valid)
    except KeyboardInterrupt:
        state.interrupted = True
        print("\ninterrupted: saving a checkpoint (resume with --resume)", file=sys.stderr)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    _save_checkpoint(out, args, model, tokenizer, opt, state)
    _export(out / "model", model, tokenizer)
    state.valid.append({"step": state.step, "loss": _valid_loss(model, valid, device)})
    report = _report(args, model, state, device)
    _write_json(out / "report.json", report)
    return report


def _stop_on_sigterm() -> Any:
    """SIGTERM (a scheduler's pre-emption, `kill`) stops like Ctrl-C: checkpoint, then exit.
    Background jobs ignore SIGINT, so without this only the periodic checkpoint would
    survive a kill. Returns the previous handler (None off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, stop)


def _loop(args: PretrainArgs, model: Any, tokenizer: Any, opt: Any, state: _State,
          valid: torch.Tensor) -> None:
    from tqdm import tqdm

    device = valid.device
    data = _loader(tokenizer, args.seed, state.step, args)
    amp = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")
    bar = tqdm(total=args.steps or None, initial=state.step, disable=not args.progress,
               unit="step", file=sys.stderr, dynamic_ncols=True)
    t0, base_elapsed, base_tokens = time.perf_counter(), state.elapsed, state.tokens
    last_ckpt, acc = t0, torch.zeros((), device=device)
    acc_answer = torch.zeros(2, device=device)  # answer tokens' summed loss, their count
    while _progress(args, state) < 1.0:
        for group in opt.param_groups:
            group["lr"] = _lr(args, state)
        batch = next(data)
        with amp:
            loss, plain, answer = _step_loss(model, batch, args.answer_weight, device)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        acc += plain
        if answer is not None:
            acc_answer += answer
        state.step += 1
        state.tokens += args.batch_size * args.seq_len  # every batch is exactly this shape
        state.elapsed = base_elapsed + time.perf_counter() - t0
        bar.update(1)
        if state.step % args.log_every == 0:
            mean = acc.item() / args.log_every
            acc.zero_()
            rate = (state.tokens - base_tokens) / max(1e-9, state.elapsed - base_elapsed)
            point = {"step": state.step, "tokens": state.tokens,
                     "seconds": round(state.elapsed, 2), "loss": round(mean, 4)}
            if args.answer_weight != 1.0:
                total, count = acc_answer.tolist()
                point["answer_loss"] = round(total / count, 4) if count else None
                acc_answer.zero_()
            state.curve.append(point)
            bar.set_postfix(loss=f"{mean:.3f}", tok_s=f"{rate:,.0f}",
                            min=f"{state.elapsed / 60:.1f}")
        if time.perf_counter() - last_ckpt > args.checkpoint_minutes * 60:
            state.valid.append({"step": state.step,
                                "loss": _valid_loss(model, valid, device)})
            _save_checkpoint(Path(args.out), args, model, tokenizer, opt, state)
            _write_json(Path(args.out) / "report.json", _report(args, model, state, device))
            last_ckpt = time.perf_counter()
    bar.close()


def _step_loss(model: Any, batch: Any, weight: float, device: torch.device
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(loss to minimise, plain mean token loss, [summed loss, count] of the answer tokens or
    None: summed, so a logging window's mean weighs every answer token alike and a batch
    without answers adds nothing rather than a zero).

    With weight 1 the batch is ids alone and the loss is the model's own mean, exactly as the
    shipped weights were trained. Otherwise answer tokens count `weight` times, normalised by
    the summed weights: an answer letter is about one token in 400 of a list document, whose
    other tokens are readings no model can predict, so the plain mean spends nearly all of its
    gradient on noise (docs/demo.md, attempt 9). The logged `loss` stays the plain mean, so
    curves with and without weighting compare."""
    if not isinstance(batch, tuple):
        x = batch.to(device, non_blocking=True)
        loss = model(input_ids=x, labels=x).loss
        return loss, loss.detach(), None
    x, mask = (t.to(device, non_blocking=True) for t in batch)
    logits = model(input_ids=x).logits[:, :-1].float()
    ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)),
                                           x[:, 1:].reshape(-1), reduction="none")
    mask = mask[:, 1:].reshape(-1)
    w = 1.0 + (weight - 1.0) * mask.float()
    answer = torch.stack([ce[mask].sum(), mask.sum().to(ce.dtype)]).detach()
    return (ce * w).sum() / w.sum(), ce.mean().detach(), answer


@torch.no_grad()
def _valid_loss(model: Any, valid: torch.Tensor, device: torch.device) -> float:
    model.eval()
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        loss = model(input_ids=valid, labels=valid).loss.item()
    model.train()
    return round(loss, 4)


# ---- files ----------------------------------------------------------------------------------

def _checkpoint_dir(out: Path) -> Path | None:
    """The newest complete checkpoint: `checkpoint`, or `checkpoint.old` if a save was cut
    between its two renames."""
    for name in ("checkpoint", "checkpoint.old"):
        if (out / name / "trainer_state.pt").is_file():
            return out / name
    return None


def _save_checkpoint(out: Path, args: PretrainArgs, model: Any, tokenizer: Any, opt: Any,
                     state: _State) -> None:
    """Write to `checkpoint.tmp`, then swap it in with renames: a kill at any moment leaves
    one complete checkpoint (`checkpoint` or `checkpoint.old`)."""
    tmp, cur, old = out / "checkpoint.tmp", out / "checkpoint", out / "checkpoint.old"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    torch.save({"state": asdict(state), "optimizer": opt.state_dict(), "args": asdict(args)},
               tmp / "trainer_state.pt")
    if cur.exists():
        shutil.rmtree(old, ignore_errors=True)
        cur.rename(old)
    tmp.rename(cur)
    shutil.rmtree(old, ignore_errors=True)


def _load_checkpoint(path: Path) -> tuple[Any, Any, _State, dict]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    saved = torch.load(path / "trainer_state.pt", map_location="cpu", weights_only=False)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    return model, AutoTokenizer.from_pretrained(path), _State(**saved["state"]), saved["optimizer"]


def _load_init(path: Path) -> tuple[Any, Any]:
    """A model to continue from, in fp32, with its own tokenizer: its vocabulary must be the
    base tokenizer's, or the corpus would be read with ids the embeddings never learned."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.errors import InvalidConfig
    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.get_vocab() != build_base_tokenizer().get_vocab():
        raise InvalidConfig(f"--init {path}: its tokenizer is not the base tokenizer "
                            f"(version {TOKENIZER_VERSION}); continue only from a base model")
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32), tokenizer


def _export(dest: Path, model: Any, tokenizer: Any) -> None:
    """The final model in bf16 (half the bytes to ship; the learner loads it back as fp32),
    swapped in atomically like a checkpoint."""
    import copy
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    half = copy.deepcopy(model).to("cpu", torch.bfloat16)
    half.save_pretrained(tmp, max_shard_size="15MB")
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def _report(args: PretrainArgs, model: Any, state: _State, device: torch.device
            ) -> dict[str, Any]:
    cfg = model.config
    n_params = sum(p.numel() for p in model.parameters())
    rate = state.tokens / max(1e-9, state.elapsed)
    flops_per_token = 6 * n_params + 12 * cfg.num_hidden_layers * cfg.hidden_size * args.seq_len
    report: dict[str, Any] = {
        "parameters": n_params, "shape": args.shape, "vocab": cfg.vocab_size,
        "corpus_version": args.corpus_version, "tokenizer_version": TOKENIZER_VERSION,
        "init": args.init,
        "steps": state.step, "tokens": state.tokens, "seconds": round(state.elapsed, 1),
        "tokens_per_s": round(rate, 1), "interrupted": state.interrupted,
        "loss_final": state.curve[-1]["loss"] if state.curve else None,
        "valid_loss": state.valid, "loss_curve": state.curve, "args": asdict(args),
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "versions": _versions(), "cpu_s": round(time.process_time(), 1),
    }
    if device.type == "cuda":
        achieved = flops_per_token * rate
        report["mfu"] = {
            "flops_per_token": flops_per_token, "achieved_tflops": round(achieved / 1e12, 3),
            "formula": "(6 * params + 12 * layers * hidden * seq_len) * tokens_per_s / peak",
            "vs_spec_989_tflops": round(achieved / SPEC_PEAK_FLOPS, 5),
            "vs_measured_790_tflops": round(achieved / MEASURED_PEAK_FLOPS, 5)}
    return report


def _versions() -> dict[str, str]:
    import subprocess

    import tokenizers
    import transformers
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"python": platform.python_version(), "torch": torch.__version__,
            "transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
            "git_commit": commit or "unknown"}

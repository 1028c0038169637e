"""The pretraining data stream of `envgym base-model`: packed corpus batches, a pure function
of (seed, batch index), so `--resume` continues the same order with any number of loader
workers; and the mask of answer tokens that `--answer-weight` weighs (agents/base_model.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import torch
from envgym.agents.base_corpus import CORPUS_VERSION, document

if TYPE_CHECKING:
    from envgym.agents.base_model import PretrainArgs

__all__ = ["answer_mask", "make_batch"]


def make_batch(tokenizer: Any, seed: int, index: int, batch_size: int, seq_len: int,
               version: int = CORPUS_VERSION, answers: bool = False) -> Any:
    """Batch `index` of the stream for `seed`: documents packed back to back, each followed by
    `<|endoftext|>`, cut into `batch_size` rows of `seq_len`. A pure function of its arguments,
    which is what makes `--resume` continue the same data order. With `answers`, also a bool
    tensor of the same shape marking the tokens inside `<answer>...</answer>` (see
    `answer_mask`), returned as `(ids, mask)`."""
    sep = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    need, ids, marks, j = batch_size * seq_len, [], [], 0
    while len(ids) < need:
        docs = [document(seed, (index << 20) + j + k, version) for k in range(64)]
        j += 64
        enc = tokenizer(docs, add_special_tokens=False, return_offsets_mapping=answers)
        for k, row in enumerate(enc["input_ids"]):
            ids += row
            ids.append(sep)
            if answers:
                marks += answer_mask(docs[k], enc["offset_mapping"][k])
                marks.append(False)
    x = torch.tensor(ids[:need], dtype=torch.long).view(batch_size, seq_len)
    if not answers:
        return x
    return x, torch.tensor(marks[:need], dtype=torch.bool).view(batch_size, seq_len)


_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
_ASSISTANT = re.compile(r"<\|im_start\|>assistant\n(.*?)(?:<\|im_end\|>|$)", re.S)


def answer_mask(text: str, offsets: list[tuple[int, int]]) -> list[bool]:
    """Which tokens (by character `offsets`) overlap the inside of an `<answer>` tag that a
    speaker gives: in a chat document only the assistant's turns count, since system turns
    quote the tag as an instruction (`<answer>LETTER</answer>`). Overlap, not containment,
    because BPE merges the tag's `>` with the answer's first character (`>A`)."""
    if "<|im_start|>" in text:
        turns = [m.span(1) for m in _ASSISTANT.finditer(text)]
    else:
        turns = [(0, len(text))]
    spans = [(a + m.start(1), a + m.end(1)) for a, b in turns
             for m in _ANSWER.finditer(text[a:b])]
    return [any(s < e1 and e > s1 for s1, e1 in spans) for s, e in offsets]


class _Batches(torch.utils.data.IterableDataset):
    """Batches start, start+1, ...; worker w of W makes start+w, start+w+W, ... and the
    DataLoader takes workers in turn, so the order is the same with any number of workers."""

    def __init__(self, tokenizer: Any, seed: int, start: int, batch_size: int, seq_len: int,
                 version: int, answers: bool):
        super().__init__()
        self.args = (tokenizer, seed, start, batch_size, seq_len, version, answers)

    def __iter__(self) -> Iterator[Any]:
        tokenizer, seed, start, batch_size, seq_len, version, answers = self.args
        info = torch.utils.data.get_worker_info()
        w, n = (info.id, info.num_workers) if info else (0, 1)
        index = start + w
        while True:
            yield make_batch(tokenizer, seed, index, batch_size, seq_len, version, answers)
            index += n


def _loader(tokenizer: Any, seed: int, start: int, args: PretrainArgs) -> Iterator[torch.Tensor]:
    data = _Batches(tokenizer, seed, start, args.batch_size, args.seq_len, args.corpus_version,
                    args.answer_weight != 1.0)
    if args.workers == 0:
        return iter(data)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return iter(torch.utils.data.DataLoader(data, batch_size=None, num_workers=args.workers,
                                            pin_memory=args.device.startswith("cuda"),
                                            prefetch_factor=4, persistent_workers=False))

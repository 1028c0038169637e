"""Per-step trajectories of a training run, with the advantages the trainer actually used.

With `[log] trajectories = true` the trainer writes `OUT/trajectories/step_NNNNNN.jsonl`
after credit: every trajectory of the step, each carrying `meta["train_step"]` and
`meta["credit"]` (the chain, the per-turn trained mask and the per-token advantages).
`envgym view OUT` shows those, so what a researcher sees is what the gradient saw, not a
recomputation. Episodes that credit left
out (failed, or dropped by `filter`) are written too, with `meta["credit"] = None`.
Asynchronous runs (`rollout.max_staleness >= 1`) also carry `meta["policy_versions"]`, the
policy version that sampled each turn.

`log_histogram` puts a per-step distribution (the asynchronous trainer's staleness) into
TensorBoard beside the scalars `MetricsLogger` writes (`metrics.jsonl` holds its buckets).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envgym.trajectory import Trajectory, write_trajectories

__all__ = ["log_histogram", "write_step"]


def write_step(out_dir: Path, step: int, trajs: list[Trajectory], credit: Any,
               chain: list[str], tokenizer: Any = None) -> Path:
    """Write one step's file atomically; the tokenizer is saved once beside the files."""
    from envgym.agents.view import credit_record

    folder = Path(out_dir) / "trajectories"
    folder.mkdir(parents=True, exist_ok=True)
    if tokenizer is not None and not (folder / "tokenizer" / "tokenizer_config.json").exists():
        tokenizer.save_pretrained(folder / "tokenizer")
    used = {id(t): (adv, mask) for t, adv, mask in
            zip(credit.trajectories, credit.advantages or [], credit.turn_mask)}
    records = []
    for t in trajs:
        rec = t.model_copy(deep=False)
        rec.meta = {**t.meta, "train_step": step,
                    "credit": credit_record(*used[id(t)], chain) if id(t) in used else None}
        records.append(rec)
    path = folder / f"step_{step:06d}.jsonl"
    write_trajectories(path, records)
    return path


def log_histogram(logger: Any, tag: str, values: list[float], step: int) -> None:
    """A TensorBoard histogram of `values` at `step`, where the logger writes TensorBoard."""
    if getattr(logger, "tb", None) is not None and values:
        import numpy as np

        logger.tb.add_histogram(tag, np.asarray(values, dtype=np.float64), step)

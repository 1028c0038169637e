"""Per-step wall and CPU seconds, generation apart from the update, for both sides of the
TRL benches (`learner_vs_trl.py`, `multiturn_vs_trl.py`).

CPU seconds are the process's (every thread's) `time.process_time()`: on a shared machine
wall time swings with other people's load, CPU time much less, so both are reported.
envgym: the trainer's `rollout` (generation, environments included) and the team's
`update` + `sync` are wrapped. TRL: `_generate_and_score_completions` (generation, tools
and rewards) and the step callbacks. A step's update is everything in it but generation.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def envgym_clock(probe: Any = None) -> Iterator[list[dict[str, float]]]:
    """Yields a list that gets one `{"gen_cpu", "update_cpu"}` per training step, plus
    what `probe()` returns at the step's end (counters the bench keeps)."""
    from envgym.agents import multi_policy, trainer

    steps: list[dict[str, float]] = []
    state = {"gen": 0.0, "update_start": 0.0}
    roll, update, sync = trainer.rollout, multi_policy.Team.update, multi_policy.Team.sync

    def timed_rollout(*a: Any, **k: Any) -> Any:
        start = time.process_time()
        try:
            return roll(*a, **k)
        finally:
            state["gen"] += time.process_time() - start

    def timed_update(team: Any, *a: Any, **k: Any) -> Any:
        state["update_start"] = time.process_time()
        return update(team, *a, **k)

    def timed_sync(team: Any, *a: Any, **k: Any) -> Any:
        try:
            return sync(team, *a, **k)
        finally:
            steps.append({"gen_cpu": state["gen"],
                          "update_cpu": time.process_time() - state["update_start"],
                          **(probe() if probe else {})})
            state["gen"] = 0.0

    trainer.rollout, multi_policy.Team.update, multi_policy.Team.sync = \
        timed_rollout, timed_update, timed_sync
    try:
        yield steps
    finally:
        trainer.rollout, multi_policy.Team.update, multi_policy.Team.sync = roll, update, sync


def trl_clock(trainer: Any) -> list[dict[str, float]]:
    """Instrument a `GRPOTrainer`; the returned list gets one record per optimiser step:
    `step_s`, `gen_s`, `step_cpu`, `gen_cpu` (add `tokens` etc. afterwards)."""
    from transformers import TrainerCallback

    record: list[dict[str, float]] = []
    gen = {"wall": 0.0, "cpu": 0.0}
    inner = trainer._generate_and_score_completions

    def timed_generation(batch: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return inner(batch)
        finally:
            gen["wall"] += time.perf_counter() - wall
            gen["cpu"] += time.process_time() - cpu
    trainer._generate_and_score_completions = timed_generation

    class Timer(TrainerCallback):
        def on_step_begin(self, *a: Any, **k: Any) -> None:
            self.wall, self.cpu = time.perf_counter(), time.process_time()
            gen["wall"] = gen["cpu"] = 0.0

        def on_step_end(self, *a: Any, **k: Any) -> None:
            record.append({"step_s": time.perf_counter() - self.wall, "gen_s": gen["wall"],
                           "step_cpu": time.process_time() - self.cpu, "gen_cpu": gen["cpu"]})
    trainer.add_callback(Timer())
    return record


def summary(steps: list[dict[str, float]], extra: tuple[str, ...] = ()) -> dict[str, float]:
    """Medians of the step and its parts (wall and CPU), tokens/s over the whole run."""
    med = lambda key: round(statistics.median(s[key] for s in steps), 3)  # noqa: E731
    out = {"median_step_s": med("step_s"), "generation_s": med("gen_s"),
           "update_s": round(statistics.median(s["step_s"] - s["gen_s"] for s in steps), 3),
           "median_step_cpu_s": med("step_cpu"), "generation_cpu_s": med("gen_cpu"),
           "update_cpu_s": round(statistics.median(s["step_cpu"] - s["gen_cpu"]
                                                   for s in steps), 3),
           "tokens_per_s": round(sum(s["tokens"] for s in steps)
                                 / sum(s["step_s"] for s in steps), 1),
           "tokens_per_cpu_s": round(sum(s["tokens"] for s in steps)
                                     / sum(s["step_cpu"] for s in steps), 1),
           "tokens_per_step": round(statistics.fmean(s["tokens"] for s in steps), 1)}
    if all("seq_tokens" in s for s in steps):  # every token of every sequence (for MFU)
        out["seq_tokens_per_s"] = round(sum(s["seq_tokens"] for s in steps)
                                        / sum(s["step_s"] for s in steps), 1)
    for key in extra:
        out[key] = round(statistics.fmean(s[key] for s in steps), 3)
    return out


def trl_seq_tokens(trainer: Any, record: list[dict[str, float]]) -> None:
    """Each step's prompt + completion tokens, from TRL's cumulative `num_tokens` log."""
    seen = [float(h["num_tokens"]) for h in trainer.state.log_history if "num_tokens" in h]
    for r, now, before in zip(record, seen, [0.0] + seen, strict=False):
        r["seq_tokens"] = now - before


def ratios(ours: dict[str, float], theirs: dict[str, float]) -> dict[str, float]:
    """envgym over TRL (tokens/s) and TRL over envgym (seconds): above 1, envgym is faster."""
    div = lambda a, b: round(a / b, 3) if b else float("nan")  # noqa: E731
    return {"ratio_tokens_per_s": div(ours["tokens_per_s"], theirs["tokens_per_s"]),
            "ratio_tokens_per_cpu_s": div(ours["tokens_per_cpu_s"], theirs["tokens_per_cpu_s"]),
            "ratio_step_time_trl_over_envgym": div(theirs["median_step_s"],
                                                   ours["median_step_s"]),
            "ratio_step_cpu_trl_over_envgym": div(theirs["median_step_cpu_s"],
                                                  ours["median_step_cpu_s"]),
            "ratio_generation_cpu_trl_over_envgym": div(theirs["generation_cpu_s"],
                                                        ours["generation_cpu_s"]),
            "ratio_update_cpu_trl_over_envgym": div(theirs["update_cpu_s"],
                                                    ours["update_cpu_s"])}

"""`envgym/TimeSeries-v0`: ARTIST-style adaptive segment selection over a long series.

One policy plays ARTIST's two roles in one episode. As the *controller* it zooms into
segments (`timeseries_zoom_in_tool` with `ts_seg: [start, end]`, two integers with
0 <= start < end <= len-1; round 1 must be a zoom; at most `max_rounds` rounds) or stops with
`<answer>ACCEPT</answer>`. As the *reasoner* it answers with `<answer>LETTER</answer>`;
answering directly after a zoom also ends the controller phase. `info["role"]` tags each turn.

Rewards follow ARTIST's controller/reasoner split (methods reference §5.2), reported per
component:

* per zoom step (controller): `round` = -0.1 and `points` = -`point_cost` x points inspected.
  ARTIST charges -0.1 x rounds inside R_c at the end; we charge it on the step that incurs
  it, which sums to the same and gives turn-level credit something to work with.
* on the answer step — reasoner: `accuracy` = 3·acc, `reasoner_format` = f_r (1, minus 0.5
  per violation); controller: `consistency` = 3·c, `exploration` = b_exp·max(0, 1-step/300)
  when 2-4 unique segments were inspected, `controller_format` = f_c. With one reasoner
  rollout c = acc; a learner can fork the answer-phase state N = 6 times for ARTIST's c.
  If any controller round was invalid, f_c = -1 and ARTIST's override applies: the
  controller's terminal part is -2.0 (reported as `controller_format`).

`info["role_rewards"]` on the last step splits the episode's reward into controller and
reasoner totals for the hierarchical estimator. Evidence coverage (share of the evidence
points inspected) is reported in the outcome, not rewarded.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field, StrictInt

from envgym.core import StepResult, TextEnv, system, user
from envgym.errors import InvalidConfig
from envgym.resources import file_key, shared
from envgym.tools import Tool, ToolCallError, extract_tag, find_tags, parse_json_calls, render_tools

from envgym.environments.timeseries.tasks import LETTERS, TASK_TYPES, Task, generate_task

__all__ = ["TimeSeriesEnv"]

ZOOM = "timeseries_zoom_in_tool"


class ZoomArgs(BaseModel):
    ts_seg: list[StrictInt] = Field(min_length=2, max_length=2,
                                    description="[start, end], two integer indices")


class AnswerArgs(BaseModel):
    answer: str = Field(description="an option letter, or ACCEPT to stop zooming")


TOOLS = (
    Tool(ZOOM, "Show the values of the series between two indices (inclusive).", ZoomArgs),
    Tool("answer", "Answer the question with an option letter.", AnswerArgs),
)
_SEG_RE = re.compile(r"^\s*\[?\s*(-?\d+)\s*,\s*(-?\d+)\s*\]?\s*$")


class TimeSeriesEnv(TextEnv):
    """Zoom into a long series, then answer a multiple-choice question about it."""

    tools = TOOLS
    shared_resources = ("dataset_tasks",)

    def __init__(self, *, series_length: int = 1024, task_types: list[str] | None = None,
                 sketch_points: int = 16, zoom_points: int = 64, max_rounds: int = 5,
                 point_cost: float = 1e-4, exploration_bonus: float = 1.0,
                 tool_format: Literal["json", "tag"] = "json", require_first_zoom: bool = True,
                 dataset: str | None = None, dataset_format: str = "auto",
                 max_turns: int | None = None, **kwargs: Any):
        super().__init__(max_turns=max_turns or max_rounds + 3, **kwargs)
        types = tuple(task_types or TASK_TYPES)
        if unknown := set(types) - set(TASK_TYPES):
            raise InvalidConfig(f"task_types: unknown {sorted(unknown)}; choose from {TASK_TYPES}")
        if series_length < 400:
            raise InvalidConfig(f"series_length must be >= 400 (room for distant events), got {series_length}")
        if tool_format not in ("json", "tag"):
            raise InvalidConfig(f"tool_format must be 'json' or 'tag', got {tool_format!r}")
        self.series_length, self.task_types = series_length, types
        self.sketch_points, self.zoom_points, self.max_rounds = sketch_points, zoom_points, max_rounds
        self.point_cost, self.exploration_bonus = point_cost, exploration_bonus
        self.tool_format, self.require_first_zoom = tool_format, require_first_zoom
        self.train_step = 0
        self.dataset_tasks: list[Task] = []
        if dataset is not None:
            from envgym.environments.timeseries.loader import load_tasks

            self.dataset_tasks = shared(("timeseries", "tasks", file_key(dataset), dataset_format),
                                        lambda: load_tasks(dataset, dataset_format))
        self.task: Task | None = None

    # ---- episode ----------------------------------------------------------------------------

    def _reset(self, seed: int, options: dict[str, Any]):
        self.train_step = int(options.get("train_step", self.train_step))
        if self.dataset_tasks:
            self.task = self.dataset_tasks[seed % len(self.dataset_tasks)]
        else:
            self.task = generate_task(seed, self.series_length, self.task_types)
        self.task_id = self.task.task_id
        self.segments: list[tuple[int, int]] = []
        self.round_formats: list[float] = []
        self.answering = False
        self.role_totals = {"controller": 0.0, "reasoner": 0.0}
        return [system(self._system_prompt()), user(self._opening())], {"role": "controller"}

    def _step(self, action: str) -> StepResult:
        try:
            answer, zooms = self._parse(action)
        except ToolCallError as e:
            return self._invalid(str(e))
        if answer is not None and zooms:
            return self._invalid("give either a zoom call or an answer in one turn, not both.")
        if answer is not None:
            return self._on_answer(action, answer)
        if not zooms:
            return self._invalid(f"no `{ZOOM}` call and no `<answer>` found.")
        if len(zooms) > 1:
            return self._invalid("one zoom per round, please.")
        return self._on_zoom(action, zooms[0])

    # ---- parsing ----------------------------------------------------------------------------

    def _parse(self, action: str) -> tuple[str | None, list[tuple[int, int]]]:
        answer = extract_tag(action, "answer")
        zooms: list[tuple[int, int]] = []
        if self.tool_format == "json":
            for call in parse_json_calls(action, self.tools):
                if call.name == "answer":
                    if answer is not None:
                        raise ToolCallError("give exactly one answer.")
                    answer = call.arguments.answer
                else:
                    zooms.append(tuple(call.arguments.ts_seg))
        else:
            for _, a, b, _ in find_tags(action, "zoom"):
                match = _SEG_RE.match(action[a:b])
                if not match:
                    raise ToolCallError("`<zoom>` needs two integers, e.g. <zoom>[120, 260]</zoom>.")
                zooms.append((int(match[1]), int(match[2])))
        return (answer.strip() if answer is not None else None), zooms

    def _letter(self, answer: str) -> str | None:
        assert self.task is not None
        letters = LETTERS[: len(self.task.options)]
        match = re.fullmatch(r"\(?([A-Ha-h])\)?[.):]?(\s.*)?", answer.strip(), re.S)
        if match and match[1].upper() in letters:
            return match[1].upper()
        for letter, option in zip(letters, self.task.options):
            if answer.strip().lower() == option.lower():
                return letter
        return None

    # ---- transitions ------------------------------------------------------------------------

    def _invalid(self, error: str) -> StepResult:
        hint = self._format_hint()
        if not self.answering:
            self.round_formats.append(-1.0)
        result = self.invalid(error, hint)
        self.role_totals[self._role()] += result.reward_components["format"]
        result.info["role"] = self._role()
        return result

    def _on_zoom(self, action: str, seg: tuple[int, int]) -> StepResult:
        assert self.task is not None
        if self.answering:
            return self._invalid("the zoom rounds are over; answer with <answer>LETTER</answer>.")
        n = len(self.task.series)
        start, end = seg
        if not 0 <= start < end <= n - 1:
            return self._invalid(f"ts_seg must satisfy 0 <= start < end <= {n - 1}; got [{start}, {end}].")
        self.segments.append((start, end))
        self.round_formats.append(_think_format(action))
        components = {"round": -0.1, "points": -self.point_cost * (end - start + 1)}
        text = _render_values(self.task.series, start, end, self.zoom_points)
        if len(self.segments) >= self.max_rounds:
            self.answering = True
            text += f"\nYou have used all {self.max_rounds} zoom rounds. Now answer: <answer>LETTER</answer>."
        self.role_totals["controller"] += sum(components.values())
        return StepResult([{"role": "tool", "content": text}], components, info={"role": "controller"})

    def _on_answer(self, action: str, answer: str) -> StepResult:
        if self.require_first_zoom and not self.segments:
            return self._invalid("round 1 must be a zoom: inspect a segment before answering.")
        if answer.upper() == "ACCEPT":
            if self.answering:
                return self._invalid("zooming is already over; answer with an option letter.")
            self.answering = True
            msg = "Zooming stopped. Answer the question: <think>…</think><answer>LETTER</answer>."
            return StepResult([user(msg)], {}, info={"role": "controller"})
        letter = self._letter(answer)
        if letter is None:
            assert self.task is not None
            return self._invalid(f"{answer[:40]!r} is not an option; answer with one of "
                                 f"{', '.join(LETTERS[:len(self.task.options)])}.")
        return self._finish_episode(action, letter)

    def _finish_episode(self, action: str, letter: str) -> StepResult:
        assert self.task is not None
        acc = float(letter == self.task.answer)
        reasoner = {"accuracy": 3.0 * acc, "reasoner_format": _reasoner_format(action)}
        controller = self._controller_terminal(acc)
        self.role_totals["reasoner"] += sum(reasoner.values())
        self.role_totals["controller"] += sum(controller.values())
        outcome = {"success": bool(acc), "score": acc, "answer": letter, "gold": self.task.answer,
                   "task_type": self.task.task_type, "rounds": len(self.segments),
                   "points_inspected": self._points_inspected(),
                   "fraction_inspected": self._points_inspected() / len(self.task.series),
                   "coverage": self._coverage(), "chance": self.task.chance}
        info = {"role": "reasoner", "outcome": outcome, "role_rewards": dict(self.role_totals)}
        feedback = "Correct." if acc else f"Incorrect; the answer was {self.task.answer}."
        return StepResult([user(feedback)], {**reasoner, **controller}, terminated=True, info=info)

    def _controller_terminal(self, c: float) -> dict[str, float]:
        f_c = -1.0 if any(f < 0 for f in self.round_formats) else float(np.mean(self.round_formats))
        if f_c < 0:
            return {"controller_format": -2.0}
        unique = len(set(self.segments))
        bonus = self.exploration_bonus * max(0.0, 1 - self.train_step / 300) if 2 <= unique <= 4 else 0.0
        return {"consistency": 3.0 * c, "exploration": bonus, "controller_format": f_c}

    # ---- metrics ----------------------------------------------------------------------------

    def _points_inspected(self) -> int:
        return len(self._inspected())

    def _inspected(self) -> set[int]:
        return {i for s, e in self.segments for i in range(s, e + 1)}

    def _coverage(self) -> float:
        assert self.task is not None
        evidence = {i for s, e in self.task.evidence for i in range(s, e + 1)}
        return len(evidence & self._inspected()) / max(1, len(evidence))

    def _role(self) -> str:
        return "reasoner" if self.answering else "controller"

    def _state(self) -> Any:
        return {"task": self.task_id, "segments": sorted(set(self.segments)), "answering": self.answering}

    @classmethod
    def summarize(cls, outcomes: list[dict[str, Any]]) -> dict[str, float]:
        metrics = super().summarize(outcomes)
        for kind in TASK_TYPES:
            scores = [o["score"] for o in outcomes if o.get("task_type") == kind]
            if scores:
                metrics[f"accuracy/{kind}"] = float(np.mean(scores))
        return metrics

    # ---- prompts ----------------------------------------------------------------------------

    def _format_hint(self) -> str:
        if self.tool_format == "json":
            zoom = f'<tool_call>{{"name": "{ZOOM}", "arguments": {{"ts_seg": [START, END]}}}}</tool_call>'
        else:
            zoom = "<zoom>[START, END]</zoom>"
        return f"Zoom with {zoom}, stop with <answer>ACCEPT</answer>, or answer with <answer>LETTER</answer>."

    def _system_prompt(self) -> str:
        tools = render_tools(self.tools[:1], "json") if self.tool_format == "json" else ""
        return (
            "You answer questions about a long time series that you cannot see in full. "
            f"Each turn, think briefly in <think>…</think>, then either zoom into one segment "
            f"(at most {self.max_rounds} rounds; the first turn must be a zoom) or answer.\n"
            + self._format_hint() + ("\n" + tools if tools else "")
        )

    def _opening(self) -> str:
        assert self.task is not None
        series = self.task.series
        sketch = _render_values(series, 0, len(series) - 1, self.sketch_points)
        options = "\n".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(self.task.options))
        return (f"The series has {len(series)} points (indices 0 to {len(series) - 1}). "
                f"Overview <ts>: {sketch}\nQuestion: {self.task.question}\nOptions:\n{options}")


def _render_values(series: list[float], start: int, end: int, budget: int) -> str:
    """Values of [start, end], mean-pooled into at most `budget` buckets."""
    values = np.asarray(series[start:end + 1])
    buckets = np.array_split(values, min(budget, len(values)))
    step = len(values) / len(buckets)
    shown = " ".join(f"{b.mean():.2f}" for b in buckets)
    return f"segment [{start}, {end}]: {len(buckets)} values, step {step:g}\n{shown}"


def _think_format(action: str) -> float:
    """A controller round's format score: 1 with exactly one well-formed <think>, else 0."""
    try:
        return 1.0 if len(find_tags(action, "think")) == 1 else 0.0
    except ToolCallError:
        return 0.0


def _reasoner_format(action: str) -> float:
    """ARTIST's f_r: start at 1, lose 0.5 per violation (missing/repeated think, answer in think)."""
    score = 1.0
    try:
        thinks = find_tags(action, "think")
    except ToolCallError:
        return 0.0
    if len(thinks) != 1:
        score -= 0.5
    if any("<answer>" in action[a:b] for _, a, b, _ in thinks):
        score -= 0.5
    return max(0.0, score)

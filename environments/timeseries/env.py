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
* a malformed turn costs `format` = -(0.1 + point_cost x span cap + `junk_margin`): more than
  the costliest valid zoom, so a well-formed zoom always earns more turn reward than a junk
  turn under every config (with the core's flat -0.1, a valid zoom earned *less*, and
  turn-level credit was reversed on the zoom that decides the episode).
* on the answer step — reasoner: `accuracy` = 3·acc, `reasoner_format` = f_r (1, minus 0.5
  per violation); controller: `consistency` = 3·c, `exploration` = b_exp·max(0, 1-step/300)
  when 2-4 *informative* zooms were made (a zoom is informative when it shows evidence points
  the episode has not seen; a junk zoom buys nothing, `info["new_evidence"]` per zoom), `controller_format` = f_c (the mean per-round
  format score). One episode has one
  reasoner answer, so here c = acc; `envgym.hierarchy.collect_hierarchical` forks the
  answer turn (`answer_fork`) into ARTIST's N samples and replaces c by their mean.
* the first segment gets `first_seg_trials` (5, as ARTIST) tries: a malformed first round is
  a retry, charged only the format penalty and tagged `info["first_seg_retry"]` (the
  `hierarchical` credit does not train it). An episode that never produces a valid segment
  ends after the last try with `controller_format` = -2.
* `format_rules = "artist"` (default), ARTIST's format rules: any invalid round after the
  first segment makes f_c < 0, so R_c is exactly the override `controller_format` = -2: it
  replaces R_c, so the controller's earlier charges come back in `override_refund` and two
  failed controller rollouts of one question tie (`info["controller_return"]` = -2); a missing, empty or malformed reasoner answer ends the episode with
  `reasoner_format` = -1 (R_r = -1) and counts as wrong. `"lenient"` keeps the older rules
  (an invalid round scores 0 in f_c; a malformed answer is a retry at the format penalty).
  Departures: see `README.md`.

Every step's `info["role_components"]` says which role each reward component belongs to
(`{"controller": {...}, "reasoner": {...}}`; the answer step has both), and the answer step's
`info["accuracy"]` is the reasoner's 0/1 correctness. The training step for the bonus's decay
comes from the run (`bind_run`, see `envgym.runstate`), or the `train_step` reset option.

The opening sketch does not answer the question (the task generator compensates its buckets,
see `tasks.py`), and one zoom covers at most `max_zoom_span` points (a quarter of the series
by default), so a single whole-series zoom cannot replace looking at the evidence. A zoom
shows at most `zoom_points` values (16 by default), mean-pooled: a wide zoom is a coarse
view and only a narrow one shows every point, so reading the whole series at full detail
takes far more rounds than the budget and segment selection, not brute force, pays.
Evidence coverage (share of the evidence points inspected) is reported in the outcome, not
rewarded.

Every rule above is a row of `rules.RULES`, read at judgement time, so that
`envgym check --mutants` can switch each off (`grader_fixtures.py` pins them all).

The exploration bonus is training-time shaping (it decays to 0 by step 300). It stays its own component, declared in `shaping_components`, so evaluation and
`envgym check` rank policies on the task reward without it (`envgym.evaluation`).
"""

from __future__ import annotations

import re
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field, StrictInt

from envgym.core import FORMAT_PENALTY, StepResult, TextEnv, system, user
from envgym.errors import InvalidConfig
from envgym.resources import file_key, shared
from envgym.tools import Tool, ToolCallError, extract_tag, find_tags, parse_json_calls, render_tools

from envgym.environments.timeseries.rules import RULES
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
    shaping_components = ("exploration",)  # training-time shaping: ranked without (evaluation)
    shared_resources = ("dataset_tasks", "run")  # forks share the run's state (envgym.runstate)

    def __init__(self, *, series_length: int = 1024, task_types: list[str] | None = None,
                 sketch_points: int = 16, zoom_points: int = 16, max_rounds: int = 5,
                 point_cost: float = 1e-4, exploration_bonus: float = 1.0,
                 tool_format: Literal["json", "tag"] = "json", require_first_zoom: bool = True,
                 first_seg_trials: int = 5, max_zoom_span: int | None = None,
                 format_rules: Literal["artist", "lenient"] = "artist",
                 dataset: str | None = None, dataset_format: str = "auto",
                 max_turns: int | None = None, **kwargs: Any):
        if first_seg_trials < 1:
            raise InvalidConfig(f"first_seg_trials must be >= 1, got {first_seg_trials}")
        kwargs.setdefault("max_invalid_actions", max(3, first_seg_trials))
        super().__init__(max_turns=max_turns or max_rounds + first_seg_trials + 2, **kwargs)
        types = tuple(task_types or TASK_TYPES)
        if unknown := set(types) - set(TASK_TYPES):
            raise InvalidConfig(f"task_types: unknown {sorted(unknown)}; choose from {TASK_TYPES}")
        if series_length < 400:
            raise InvalidConfig(f"series_length must be >= 400 (room for distant events), got {series_length}")
        if format_rules not in ("artist", "lenient"):
            raise InvalidConfig(f"format_rules must be 'artist' or 'lenient', got {format_rules!r}")
        self.format_rules = format_rules
        if tool_format not in ("json", "tag"):
            raise InvalidConfig(f"tool_format must be 'json' or 'tag', got {tool_format!r}")
        self.series_length, self.task_types = series_length, types
        self.sketch_points, self.zoom_points, self.max_rounds = sketch_points, zoom_points, max_rounds
        self.point_cost, self.exploration_bonus = point_cost, exploration_bonus
        self.tool_format, self.require_first_zoom = tool_format, require_first_zoom
        self.first_seg_trials, self.max_zoom_span = first_seg_trials, max_zoom_span
        if max_zoom_span is not None and max_zoom_span < 2:
            raise InvalidConfig(f"max_zoom_span must be >= 2 points, got {max_zoom_span}")
        self.train_step = 0
        self.run: Any = None
        self.dataset_tasks: list[Task] = []
        if dataset is not None:
            from envgym.environments.timeseries.loader import load_tasks

            self.dataset_tasks = shared(("timeseries", "tasks", file_key(dataset), dataset_format),
                                        lambda: load_tasks(dataset, dataset_format))
        self.task: Task | None = None

    # ---- episode ----------------------------------------------------------------------------

    @classmethod
    def task_pool_size(cls, kwargs: dict[str, Any]) -> int | None:
        """A dataset is a finite pool (`seed % N`); the generator never repeats a task."""
        if kwargs.get("dataset") is None:
            return None
        from envgym.environments.timeseries.loader import load_tasks
        return len(load_tasks(kwargs["dataset"], kwargs.get("dataset_format", "auto")))

    def bind_run(self, run: Any) -> None:
        """The run-level hook (`envgym.runstate`): the exploration bonus decays with
        `run.step`, read at every reset."""
        self.run = run

    def answer_fork(self) -> TimeSeriesEnv:
        """A copy at the current state in which zooming is over: it takes only a reasoner
        answer. ARTIST's N reasoner samples answer from one controller rollout's evidence."""
        fork = self.fork()
        fork.answering = True
        return fork

    def _reset(self, seed: int, options: dict[str, Any]):
        step = self.run.step if self.run is not None else self.train_step
        self.train_step = int(options.get("train_step", step))
        if self.dataset_tasks:
            self.task = self.dataset_tasks[seed % len(self.dataset_tasks)]
        else:
            self.task = generate_task(seed, self.series_length, self.task_types,
                                      self.sketch_points)
        self.task_id = self.task.task_id
        self.segments: list[tuple[int, int]] = []
        self.round_formats: list[float] = []
        self.first_tries = 0
        self.invalid_rounds = 0
        self.informative = 0  # zooms that showed evidence points not seen before
        self.overridden = False
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
        """A malformed turn. Before the first valid segment it is one of the first segment's
        `first_seg_trials` tries (the last failed try ends the episode with the -2
        override); after it, the round scores 0 in the controller's format mean."""
        role = self._role()
        retry = not self.answering and not self.segments
        if retry:
            self.first_tries += 1
            if self.first_tries >= self.first_seg_trials:
                return self._give_up(error)
        elif not self.answering:
            self.round_formats.append(0.0)
            self.invalid_rounds += 1
        elif self.format_rules == "artist" and RULES.on("malformed_answer"):
            return self._malformed_answer(error)
        result = self.invalid(error, self._format_hint(), penalty=self._junk_penalty())
        self.role_totals[role] += result.reward_components["format"]
        result.info.update(role=role, role_components={role: dict(result.reward_components)})
        if retry:  # ARTIST retries the first segment; a failed try is not an action to train
            result.info["first_seg_retry"] = True
        return result

    def _malformed_answer(self, error: str) -> StepResult:
        """ARTIST: a missing, empty or malformed reasoner answer gives R_r = -1 and ends the
        episode; the controller is scored as for a wrong answer (c counts it as wrong)."""
        assert self.task is not None
        reasoner = {"reasoner_format": float(RULES["malformed_answer"])}
        controller = self._controller_terminal(0.0)
        self.role_totals["reasoner"] += reasoner["reasoner_format"]
        self._book_controller(controller)
        outcome = {"success": False, "score": 0.0, "answer": None, "gold": self.task.answer,
                   "task_type": self.task.task_type, "rounds": len(self.segments),
                   "points_inspected": self._points_inspected(),
                   "fraction_inspected": self._points_inspected() / len(self.task.series),
                   "coverage": self._coverage(), "chance": self.task.chance, "malformed": True}
        info = {"role": "reasoner", "outcome": outcome, **self._role_returns(),
                "task_return": self._task_return(controller), "accuracy": 0.0,
                "role_components": {"controller": dict(controller), "reasoner": dict(reasoner)}}
        return StepResult([user(f"Invalid answer: {error} The episode is over.")],
                          {**reasoner, **controller}, terminated=True, info=info, parse_error=error)

    def _give_up(self, error: str) -> StepResult:
        """No valid segment in `first_seg_trials` tries: ARTIST's -2 controller override."""
        assert self.task is not None
        components = self._override()
        self._book_controller(components)
        outcome = {"success": False, "score": 0.0, "answer": None, "gold": self.task.answer,
                   "task_type": self.task.task_type, "rounds": 0, "points_inspected": 0,
                   "fraction_inspected": 0.0, "coverage": 0.0, "chance": self.task.chance,
                   "gave_up": True}
        msg = (f"Invalid action: {error}\nNo valid segment in {self.first_seg_trials} tries; "
               "the episode is over.")
        info = {"role": "controller", "role_components": {"controller": dict(components)},
                "outcome": outcome, **self._role_returns(),
                "task_return": self._task_return(components)}
        return StepResult([user(msg)], components, terminated=True, info=info, parse_error=error)

    def _on_zoom(self, action: str, seg: tuple[int, int]) -> StepResult:
        assert self.task is not None
        if self.answering:
            return self._invalid("the zoom rounds are over; answer with <answer>LETTER</answer>.")
        n = len(self.task.series)
        start, end = seg
        if not 0 <= start < end <= n - 1:
            return self._invalid(f"ts_seg must satisfy 0 <= start < end <= {n - 1}; got [{start}, {end}].")
        if end - start + 1 > self._span_cap():
            return self._invalid(f"one zoom covers at most {self._span_cap()} points; "
                                 f"[{start}, {end}] has {end - start + 1}. Zoom into a part.")
        new_evidence = len(self._evidence() & set(range(start, end + 1)) - self._inspected())
        self.informative += new_evidence > 0
        self.segments.append((start, end))
        self.round_formats.append(_think_format(action))
        round_cost = float(RULES["round_cost"]) if RULES.on("round_cost") else 0.0
        components = {"round": -round_cost, "points": -self.point_cost * (end - start + 1)}
        budget = self.zoom_points if RULES.on("downsample") else end - start + 1
        text = _render_values(self.task.series, start, end, budget)
        shown = min(budget, end - start + 1)
        if len(self.segments) >= self.max_rounds:
            self.answering = True
            text += f"\nYou have used all {self.max_rounds} zoom rounds. Now answer: <answer>LETTER</answer>."
        self.role_totals["controller"] += sum(components.values())
        return StepResult([{"role": "tool", "content": text}], components,
                          info={"role": "controller", "values_shown": shown,
                                "new_evidence": new_evidence,
                                "role_components": {"controller": dict(components)}})

    def _on_answer(self, action: str, answer: str) -> StepResult:
        if self.require_first_zoom and RULES.on("first_zoom") and not self.segments:
            return self._invalid("round 1 must be a zoom: inspect a segment before answering.")
        if answer.upper() == "ACCEPT":
            if self.answering:
                return self._invalid("zooming is already over; answer with an option letter.")
            self.answering = True
            msg = "Zooming stopped. Answer the question: <think>…</think><answer>LETTER</answer>."
            return StepResult([user(msg)], {}, info={"role": "controller",
                                                     "role_components": {"controller": {}}})
        letter = self._letter(answer)
        if letter is None:
            assert self.task is not None
            if self.format_rules == "artist":  # an answer was given: the reasoner's, malformed
                self.answering = True
            return self._invalid(f"{answer[:40]!r} is not an option; answer with one of "
                                 f"{', '.join(LETTERS[:len(self.task.options)])}.")
        return self._finish_episode(action, letter)

    def _finish_episode(self, action: str, letter: str) -> StepResult:
        assert self.task is not None
        acc = float(letter == self.task.answer)
        weight = float(RULES["accuracy_weight"]) if RULES.on("accuracy_weight") else 0.0
        reasoner = {"accuracy": weight * acc, "reasoner_format": _reasoner_format(action)}
        controller = self._controller_terminal(acc)
        self.role_totals["reasoner"] += sum(reasoner.values())
        self._book_controller(controller)
        outcome = {"success": bool(acc), "score": acc, "answer": letter, "gold": self.task.answer,
                   "task_type": self.task.task_type, "rounds": len(self.segments),
                   "points_inspected": self._points_inspected(),
                   "fraction_inspected": self._points_inspected() / len(self.task.series),
                   "coverage": self._coverage(), "chance": self.task.chance}
        info = {"role": "reasoner", "outcome": outcome, **self._role_returns(),
                "task_return": self._task_return(controller),
                "role_components": {"controller": dict(controller), "reasoner": dict(reasoner)},
                "accuracy": acc}
        feedback = "Correct." if acc else f"Incorrect; the answer was {self.task.answer}."
        return StepResult([user(feedback)], {**reasoner, **controller}, terminated=True, info=info)

    def _task_return(self, terminal: dict[str, float]) -> float:
        """The episode's return without the shaping components (all paid on the last step)."""
        shaping = sum(terminal.get(k, 0.0) for k in self.shaping_components)
        return sum(self.role_totals.values()) - shaping

    def _controller_terminal(self, c: float) -> dict[str, float]:
        if not self.segments:  # only without require_first_zoom: never a valid segment
            return self._override()
        if self.invalid_rounds and self.format_rules == "artist" and RULES.on("override"):
            return self._override()  # f_c < 0: R_c = -2
        f_c = float(np.mean(self.round_formats))
        weight = float(RULES["consistency_weight"]) if RULES.on("consistency_weight") else 0.0
        return {"consistency": weight * c, "exploration": self._bonus(), "controller_format": f_c}

    def _bonus(self) -> float:
        """ARTIST's b_exp for 2-4 segments, counting only zooms that showed evidence the
        episode had not seen: a junk zoom adds no information, so it cannot buy the bonus."""
        count = self.informative if RULES.on("informative_only") else len(set(self.segments))
        lo = RULES["bonus_min_zooms"] if RULES.on("bonus_min_zooms") else 0
        hi = RULES["bonus_max_zooms"] if RULES.on("bonus_max_zooms") else float("inf")
        if not lo <= count <= hi:
            return 0.0
        if not RULES.on("bonus_decay_steps"):
            return float(self.exploration_bonus)
        return self.exploration_bonus * max(0.0, 1 - self.train_step / RULES["bonus_decay_steps"])

    def _override(self) -> dict[str, float]:
        """ARTIST's R_c override. It replaces R_c (methods reference §5.2), so the controller's
        earlier round, point and format charges come back in `override_refund`: the
        controller's rewards over the episode then sum to the override alone."""
        self.overridden = True
        value = float(RULES["override"]) if RULES.on("override") else 0.0
        prior = self.role_totals["controller"]
        if RULES.on("override_replaces") and prior:
            return {"controller_format": value, "override_refund": -prior}
        return {"controller_format": value}

    def _book_controller(self, terminal: dict[str, float]) -> None:
        """Add the controller's terminal components to R_c (set it exactly on an override)."""
        if self.overridden and RULES.on("override_replaces"):
            self.role_totals["controller"] = terminal["controller_format"]
        else:
            self.role_totals["controller"] += sum(terminal.values())

    def _role_returns(self) -> dict[str, Any]:
        return {"role_rewards": dict(self.role_totals),
                "controller_return": self.role_totals["controller"],
                "reasoner_return": self.role_totals["reasoner"]}

    def _junk_penalty(self) -> float:
        """A malformed turn's charge: `junk_margin` more than the costliest valid zoom (round
        cost plus a full-span zoom's points), so a well-formed zoom always earns more turn
        reward than a junk turn (issue 37), whatever the config's point cost and span."""
        if not RULES.on("junk_margin"):
            return FORMAT_PENALTY
        round_cost = float(RULES["round_cost"]) if RULES.on("round_cost") else 0.0
        return -(round_cost + self.point_cost * self._span_cap() + float(RULES["junk_margin"]))

    # ---- metrics ----------------------------------------------------------------------------

    def _points_inspected(self) -> int:
        return len(self._inspected())

    def _inspected(self) -> set[int]:
        return {i for s, e in self.segments for i in range(s, e + 1)}

    def _evidence(self) -> set[int]:
        assert self.task is not None
        return {i for s, e in self.task.evidence for i in range(s, e + 1)}

    def _coverage(self) -> float:
        evidence = self._evidence()
        return len(evidence & self._inspected()) / max(1, len(evidence))

    def _span_cap(self) -> int:
        assert self.task is not None
        n = len(self.task.series)
        if not RULES.on("span_divisor"):
            return self.max_zoom_span or n
        return self.max_zoom_span or max(2, n // RULES["span_divisor"])

    def _role(self) -> str:
        return "reasoner" if self.answering else "controller"

    def _state(self) -> Any:
        return {"task": self.task_id, "segments": sorted(set(self.segments)), "answering": self.answering}

    @classmethod
    def summarize(cls, outcomes: list[dict[str, Any]]) -> dict[str, float]:
        """Adds per-type accuracy and `above_chance`, the mean of score minus the task's
        chance rate (answering blind sits at 0 whatever the mix of task types)."""
        metrics = super().summarize(outcomes)
        scored = [o for o in outcomes if "chance" in o]
        if scored:
            metrics["above_chance"] = float(np.mean([o["score"] - o["chance"] for o in scored]))
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
            f"(at most {self.max_rounds} rounds of at most {self._span_cap()} points each; the "
            "first turn must be a zoom) or answer.\n"
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
    cost = float(RULES["reasoner_violation"]) if RULES.on("reasoner_violation") else 0.0
    try:
        thinks = find_tags(action, "think")
    except ToolCallError:
        return 0.0
    if len(thinks) != 1:
        score -= cost
    if any("<answer>" in action[a:b] for _, a, b, _ in thinks):
        score -= cost
    return max(0.0, score)

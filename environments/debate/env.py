"""`envgym/Debate-v0`: ILR's Dynamic Interaction and Idea3 debate for N maths solvers.

An episode is one question and four simultaneous steps for every agent (a PettingZoo
`ParallelEnv`):

0. **independent** — each agent answers alone (its *initial* answer, which also feeds the IRT
   model). The reset observation asks for it.
1. **sharing** — each agent states its approach and answer. The prompt states the mode; it
   carries no peer text, since the previous phase was private by design.
2. **analysis** — each agent reads the others' sharing messages and analyses them:
   constructively in cooperative mode, looking for flaws in competitive mode.
3. **fusion** — each agent reads the others' analyses and gives its own *final* answer.

The mode is fixed at reset: `interaction="cooperative"|"competitive"`, or `"dynamic"`, where
`irt.choose_mode` picks it from the online IRT estimates (see `irt.py` for our model and rule).
`n_agents=1` is ILR's inference setting: the agent answers alone in one step.

Rewards per agent, in `reward_components` (all weights configurable; the rules and why they
hold up against attacks are in `grading.py`): `initial` (phase-0 answer right, paid at phase 0;
ILR trains the solo skill used at inference), `correct` (final answer right), `shared` (the
share of the agent's sharing/analysis answers that are its right final answer: what an agent
tells its partners is tied to what it answers), `team` (the share of agents that end
right, in either mode: linear in each agent's correctness, so agreement alone earns nothing), `persuaded` (penalty for a right initial answer turned wrong), `format` (each
malformed action). No component grows when a peer ends wrong, and none depends on the mode:
the mode changes the prompts only, so lowering one's IRT ability to pick the mode never pays.
Phases never wait for a retry: a malformed action costs the format penalty, and a malformed
phase-0 or fusion action counts as no answer.
Without an `<answer>` tag the `\\boxed{}` answer counts, but several different boxed answers
are malformed: a hedge must not be graded by whichever candidate comes last.

Peer text reaches an agent quoted line by line and peers' answers as JSON strings
(`transcript.py`), so no message can forge a line the environment authors.

Perception calibration: the last step's `info[agent]` carries `reward_stats` (this agent's and
its partners' episode returns over the last `stats_window` episodes, and this episode's group
of agents) and `calibrated_reward` from `calibration.calibrated_reward`.

Run-level state (`envgym.runstate`). Bound to a run (`bind_run`, what `envgym train` does),
the IRT model and the return histories are the run's, shared by every episode and step:
an episode reads them at reset (the mode rule uses the run's abilities) and never writes
them; `DebateEnv.update_run` learns from the step's finished trajectories (IRT observations
of the initial answers, returns into the histories), and the trainer checkpoints them.
Unbound, an instance keeps its own and updates them itself at the end of each episode.
The last step's `info[agent]["trajectory_meta"]` records what the estimators read: the
episode's `mode`, `level`, the IRT inputs (`irt_item`, `prior_difficulty`,
`initial_correct`) and every agent's `reward_history` statistics as of reset.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from envgym.core import state_digest, system, user
from envgym.errors import InvalidConfig, ResetNeeded
from envgym.multiagent import MultiAgentTextEnv
from envgym.resources import file_key, shared
from envgym.tools import ToolCallError, extract_tag

from envgym.environments.debate import grading
from envgym.environments.debate.answers import (all_boxed, answers_match, last_boxed,
                                                normalize_answer)
from envgym.environments.debate.calibration import calibrated_reward, reward_stats
from envgym.environments.debate.data import Problem, difficulty_bucket, load_problems
from envgym.environments.debate.irt import IRTModel, choose_mode
from envgym.environments.debate.metrics import episode_outcomes, summarize_outcomes
from envgym.environments.debate.prompts import MODE_RULES, PROMPTS, REWARD_RULES
from envgym.environments.debate.transcript import format_answers, quote

__all__ = ["DebateEnv", "PHASES"]

PHASES = ("independent", "sharing", "analysis", "fusion")
ANSWER_REQUIRED = {"independent": True, "sharing": True, "analysis": False, "fusion": True}
INTERACTIONS = ("dynamic", "cooperative", "competitive")


class DebateEnv(MultiAgentTextEnv):
    """N agents debate one maths question per episode (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "name": "envgym_debate_v0"}
    shared_resources = ("problems", "run")  # forks share the run's state (envgym.runstate)

    def __init__(self, n_agents: int = 2, interaction: str = "dynamic", *,
                 dataset: str | None = None, dataset_format: str = "auto", split: str = "train",
                 n_generated: int = 1000, data_seed: int = 0,
                 trainable: dict[str, bool] | list[str] | None = None,
                 irt: IRTModel | None = None, irt_model: str = "2pl", irt_update: bool = True,
                 ability_prior: dict[str, float] | None = None, difficulty_prior_scale: float = 1.0,
                 difficulty_prior_std: float = 1.0,
                 mode_threshold: float = 0.5, mode_rule: str = "mean",
                 correct_reward: float = 1.0, initial_reward: float = 0.5,
                 shared_reward: float = 0.25, team_bonus: float = 0.5,
                 competitive_bonus: float | None = None, persuasion_penalty: float = 0.5,
                 format_penalty: float = -0.1, stats_window: int = 64,
                 calibration_weight: float = 0.5, calibration_mode: str = "advantage",
                 prompts: dict[str, str] | None = None, max_action_chars: int = 20_000,
                 max_shared_chars: int = 2_000, render_mode: str | None = None):
        if not 1 <= n_agents <= 4:
            raise InvalidConfig(f"n_agents must be 1 to 4, got {n_agents}.")
        if interaction not in INTERACTIONS:
            raise InvalidConfig(f"interaction must be one of {INTERACTIONS}, got `{interaction}`.")
        choose_mode([0.5], mode_threshold, mode_rule)  # validates the rule early
        if competitive_bonus is not None:
            raise InvalidConfig("competitive_bonus was removed: it paid an agent for its peers "
                                "ending wrong, so misleading a partner paid (see grading.py).")
        agents = [f"agent_{k}" for k in range(n_agents)]
        if isinstance(trainable, list):
            trainable = {a: a in trainable for a in agents}
        super().__init__(agents, trainable)
        self.interaction, self.mode_threshold, self.mode_rule = interaction, mode_threshold, mode_rule
        self.problems: list[Problem] = _problems(dataset, dataset_format, split, n_generated,
                                                     data_seed)
        self.irt = irt or IRTModel(model=irt_model, difficulty_prior_std=difficulty_prior_std)
        for a in agents:
            self.irt.add_agent(a, (ability_prior or {}).get(a, 0.0))
        self.irt_update, self.prior_scale = irt_update, difficulty_prior_scale
        self.weights = {"correct": correct_reward, "initial": initial_reward,
                        "shared": shared_reward, "team": team_bonus,
                        "persuaded": -abs(persuasion_penalty), "format": format_penalty}
        self.stats_window, self.calibration = stats_window, (calibration_weight, calibration_mode)
        unknown = set(prompts or {}) - set(PROMPTS)
        if unknown:
            raise InvalidConfig(f"unknown prompt keys {sorted(unknown)}; known: {sorted(PROMPTS)}.")
        self.prompts = {**PROMPTS, **(prompts or {})}
        self.max_action_chars, self.max_shared_chars = max_action_chars, max_shared_chars
        self.render_mode = render_mode
        self.phases = PHASES if n_agents > 1 else PHASES[:1]
        self.return_history = {a: deque(maxlen=stats_window) for a in agents}
        self.task: Problem | None = None
        self.task_id: str | None = None
        self.mode, self.phase_index, self.turn = "solo", 0, 0
        self.run: Any = None

    RUN_KEY = "envgym/Debate-v0"

    @classmethod
    def task_pool_size(cls, kwargs: dict[str, Any]) -> int | None:
        """Questions are `problems[seed % N]`; config validation keeps train and eval
        seeds on disjoint questions. N is known without loading only for generated sets."""
        if kwargs.get("dataset") is None or kwargs.get("dataset_format") == "generated":
            return int(kwargs.get("n_generated", 1000))
        return len(load_problems(kwargs["dataset"], kwargs.get("dataset_format", "auto"),
                                 kwargs.get("split", "train"), 0))

    def bind_run(self, run: Any) -> None:
        """Use the run's IRT model and return histories (created from this instance's priors
        and window the first time); see the module docstring."""
        shared = run.setdefault(self.RUN_KEY, lambda: {"irt": self.irt,
                                                       "history": self.return_history})
        self.irt, self.return_history, self.run = shared["irt"], shared["history"], run

    @classmethod
    def update_run(cls, run: Any, trajectories: list[Any]) -> None:
        """Learn from finished episodes: every agent's initial answer is an IRT observation,
        every agent's return joins its history. In trajectory order, so resumes are exact."""
        shared = run.state.get(cls.RUN_KEY)
        if shared is None:
            return
        irt, history = shared["irt"], shared["history"]
        seen = False
        for t in trajectories:
            meta = t.meta
            if "irt_item" not in meta or t.agent_id is None:
                continue
            irt.observe(t.agent_id, meta["irt_item"], bool(meta["initial_correct"]),
                        float(meta["prior_difficulty"]), refit=False)
            window = next(iter(history.values())).maxlen if history else 64
            history.setdefault(t.agent_id, deque(maxlen=window)).append(float(t.total_reward))
            seen = True
        if seen:
            irt.fit()

    # ---- reset ------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        options = dict(options or {})
        task_seed = self.seed_rng(seed)
        self.task = self._pick_task(task_seed, options)
        self.task_id = self.task.id
        self.agents = list(self.possible_agents)
        self.phase_index, self.turn = 0, 0
        self.p_success = {a: self.irt.p_correct(a, self.task_id, self.prior_difficulty())
                          for a in self.agents}
        self.mode = self._pick_mode(options)
        self.answers: dict[str, str | None] = dict.fromkeys(self.agents)
        self.initial: dict[str, str | None] = dict.fromkeys(self.agents)
        self.final: dict[str, str | None] = dict.fromkeys(self.agents)
        self.stated: dict[str, list[str]] = {a: [] for a in self.agents}
        self.said: dict[str, dict[str, str]] = {p: {} for p in self.phases}
        self.returns = dict.fromkeys(self.agents, 0.0)
        self.invalid_count = dict.fromkeys(self.agents, 0)
        self.history_at_reset = {a: reward_stats(self.return_history[a]) for a in self.agents}
        solo = len(self.agents) == 1
        observations = {a: [system(self.prompts["system_solo" if solo else "system"].format(
            agent=a, n_agents=len(self.agents), reward_rules=REWARD_RULES)),
            user(self.prompts["independent"].format(question=self.task.question))]
            for a in self.agents}
        self._log = [f"[question {self.task_id}, mode {self.mode}] {self.task.question}"]
        infos = {a: self._info(a) | {"irt": self._irt_info(a)} for a in self.agents}
        return observations, infos

    def prior_difficulty(self) -> float:
        """IRT difficulty prior of the current question from its level tag (0 if untagged)."""
        level = self.task.level if self.task else None
        return 0.0 if level is None else (level - 3) * self.prior_scale

    def _pick_task(self, seed: int, options: dict[str, Any]) -> Problem:
        if "task_id" in options:
            found = [p for p in self.problems if p.id == options["task_id"]]
            if not found:
                raise InvalidConfig(f"No question with id `{options['task_id']}`.")
            return found[0]
        return self.problems[int(options.get("task_index", seed)) % len(self.problems)]

    def _pick_mode(self, options: dict[str, Any]) -> str:
        if len(self.possible_agents) == 1:
            return "solo"
        forced = options.get("mode") or (self.interaction if self.interaction != "dynamic" else None)
        if forced is not None:
            if forced not in INTERACTIONS[1:]:
                raise InvalidConfig(f"mode must be `cooperative` or `competitive`, got `{forced}`.")
            return forced
        return choose_mode(list(self.p_success.values()), self.mode_threshold, self.mode_rule)

    # ---- step -------------------------------------------------------------------------------

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise ResetNeeded("step() called on a finished episode; call reset() first.")
        phase = self.phases[self.phase_index]
        self.turn += 1
        components: dict[str, dict[str, float]] = {a: {} for a in self.agents}
        errors: dict[str, str | None] = {}
        for a in self.agents:
            answer, text, errors[a] = self._parse(actions.get(a), phase)
            self.said[phase][a] = text[: self.max_shared_chars]
            self._log.append(f"[{a}, {phase}] {text[:self.max_shared_chars]}")
            if errors[a]:
                components[a]["format"] = self.weights["format"]
                self.invalid_count[a] += 1
            elif answer is not None:
                self.answers[a] = answer
                if phase in ("sharing", "analysis"):
                    self.stated[a].append(answer)
            if phase == "independent":
                self.initial[a] = None if errors[a] else answer
                if len(self.phases) > 1:  # solo: the phase-0 answer is the final one
                    components[a]["initial"] = grading.initial_component(
                        self.weights, answers_match(self.initial[a], self.task.answer))
            if phase == self.phases[-1]:
                self.final[a] = None if errors[a] else answer
        self.phase_index += 1
        if self.phase_index == len(self.phases):
            return self._finish(phase, components, errors)
        observations = {a: [user(self._prompt(a, errors[a]))] for a in self.agents}
        return self._package(observations, components, errors, phase, done=False)

    def _parse(self, action: Any, phase: str) -> tuple[str | None, str, str | None]:
        """(answer, text, error) of one action; bad input becomes an error, never an exception."""
        if action is None:
            return None, "", "no action was given; every live agent must act in every phase."
        text = action if isinstance(action, str) else (
            bytes(action).decode("utf-8", "replace") if isinstance(action, (bytes, bytearray))
            else str(action))
        if len(text) > self.max_action_chars:
            return None, text, (f"the action has {len(text)} characters; the limit is "
                                f"{self.max_action_chars}.")
        if not text.strip():
            return None, text, "the action is empty."
        try:
            answer = extract_tag(text, "answer")
        except ToolCallError as e:
            return None, text, str(e)
        if answer is None and len({normalize_answer(b) for b in all_boxed(text)}) > 1:
            return None, text, ("several different \\boxed{} answers; give exactly one, as "
                                "<answer>42</answer>.")
        answer = last_boxed(text) if answer is None else answer
        if answer is not None and not answer.strip():
            return None, text, "the answer is empty; write it as <answer>42</answer>."
        if answer is None and ANSWER_REQUIRED[phase]:
            return None, text, f"missing <answer>...</answer> in the {phase} phase."
        return (answer.strip() if answer else None), text, None

    def _prompt(self, agent: str, error: str | None) -> str:
        """The next phase's prompt: peers' messages of the phase just played, with the mode."""
        phase, played = self.phases[self.phase_index], self.phases[self.phase_index - 1]
        peers = [p for p in self.agents if p != agent]
        key = f"analysis_{self.mode}" if phase == "analysis" else phase
        return self.prompts[key].format(
            agent=agent, mode=self.mode, mode_rule=MODE_RULES[self.mode],
            note=f"Invalid action: {error}\n\n" if error else "",
            peers="\n".join(f"[{p}]\n{quote(self.said[played].get(p, ''))}\n" for p in peers),
            answers=format_answers({p: self.answers[p] for p in peers}))

    def _finish(self, phase: str, components: dict[str, dict[str, float]],
                errors: dict[str, str | None]):
        gold = self.task.answer
        first = {a: answers_match(self.initial[a], gold) for a in self.agents}
        last = {a: answers_match(self.final[a], gold) for a in self.agents}
        for a in self.agents:
            components[a] |= grading.final_components(a, self.weights, first, last,
                                                      self.stated[a], self.final[a])
        finals = {normalize_answer(self.final[a]) for a in self.agents}
        consensus = len(finals) == 1 and "" not in finals
        self._update_irt(first)
        observations = {a: [user(self.prompts["done"].format(
            note=f"Invalid action: {errors[a]}\n\n" if errors[a] else "", gold=gold,
            verdict=f"`{self.final[a]}` is {'right' if last[a] else 'wrong'}"
            if self.final[a] else "was missing"))] for a in self.agents}
        result = self._package(observations, components, errors, phase, done=True)
        self._add_stats(result[4])
        outcomes = episode_outcomes(first, last, mode=self.mode, level=self.task.level,
                                    bucket=difficulty_bucket(self.task.level), consensus=consensus,
                                    p_success=self.p_success, invalid=self.invalid_count,
                                    returns=self.returns,
                                    calibrated={a: result[4][a]["calibrated_reward"]
                                                for a in result[4]})
        for a in result[4]:
            result[4][a]["outcome"] = outcomes[a]
        return result

    def _update_irt(self, first: dict[str, bool]) -> None:
        if not self.irt_update or self.run is not None:  # bound: the run learns (update_run)
            return
        for a in self.agents:
            self.irt.observe(a, self.task_id, first[a], self.prior_difficulty(), refit=False)
        self.irt.fit()

    def _add_stats(self, infos: dict[str, dict[str, Any]]) -> None:
        """Reward statistics for perception calibration (see the module docstring)."""
        if self.run is None:  # bound: the run's histories grow in update_run
            for a in self.possible_agents:
                self.return_history[a].append(self.returns[a])
        group = reward_stats(self.returns.values())
        weight, mode = self.calibration
        for a in self.possible_agents:
            peers = [p for p in self.possible_agents if p != a]
            partners = reward_stats(r for p in peers for r in self.return_history[p])
            partner_now = sum(self.returns[p] for p in peers) / max(1, len(peers))
            infos[a]["reward_stats"] = {"own": reward_stats(self.return_history[a]),
                                        "partners": partners, "group": group,
                                        "partner_reward": partner_now}
            infos[a]["calibrated_reward"] = calibrated_reward(
                self.returns[a], {**partners, "reward": partner_now}, weight=weight, mode=mode)
            infos[a]["trajectory_meta"] = {
                "mode": self.mode, "level": self.task.level, "irt_item": self.task_id,
                "prior_difficulty": self.prior_difficulty(),
                "initial_correct": bool(answers_match(self.initial[a], self.task.answer)),
                "p_success": self.p_success[a], "reward_history": self.history_at_reset}

    def _package(self, observations, components, errors, phase: str, done: bool):
        rewards = {a: float(sum(components[a].values())) for a in self.agents}
        for a, r in rewards.items():
            self.returns[a] += r
        infos = {a: self._info(a) | {"phase": phase, "reward_components": components[a]}
                 for a in self.agents}
        for a, error in errors.items():
            if error:
                infos[a]["parse_error"] = error
        terminations = dict.fromkeys(self.agents, done)
        truncations = dict.fromkeys(self.agents, False)
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    # ---- info, state, metrics ---------------------------------------------------------------

    def _info(self, agent: str) -> dict[str, Any]:
        return {"task_id": self.task_id, "turn": self.turn, "mode": self.mode,
                "next_phase": self.phases[self.phase_index] if self.phase_index < len(self.phases)
                else None, "trainable": self.trainable[agent], "state_key": self.state_key()}

    def _irt_info(self, agent: str) -> dict[str, float]:
        return {"ability": self.irt.ability(agent), "p_correct": self.p_success[agent],
                "difficulty": self.irt.difficulty(self.task_id, self.prior_difficulty()),
                "discrimination": self.irt.discrimination(self.task_id)}

    @property
    def phase(self) -> str | None:
        """The phase the agents act in next (None once the episode is over)."""
        return self.phases[self.phase_index] if self.agents else None

    def state_key(self) -> str:
        return state_digest({"task": self.task_id, "phase": self.phase_index, "mode": self.mode,
                             "answers": {a: normalize_answer(v) for a, v in self.answers.items()}
                             if self.task else {}})

    def render(self) -> str | None:
        return "\n".join(getattr(self, "_log", [])) if self.render_mode == "ansi" else None

    @classmethod
    def summarize(cls, outcomes: list[dict[str, Any]]) -> dict[str, float]:
        return summarize_outcomes(outcomes)


def _problems(dataset: str | None, dataset_format: str, split: str, n_generated: int,
              data_seed: int) -> list[Problem]:
    """The problem set, loaded once per process (per file version) and shared read-only."""
    return shared(("debate", "problems", file_key(dataset), dataset_format, split, n_generated,
                   data_seed),
                  lambda: load_problems(dataset, dataset_format, split, n_generated, data_seed))

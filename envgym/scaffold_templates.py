"""The files `envgym init` writes (see `envgym/scaffold.py`), as text with placeholders.

`__NAME__` is the package (and entry-point) name, `__CLASS__` its CamelCase form, `__ENV_ID__`
the registered id. Kept as Python strings rather than package data so that they travel inside
the wheel with nothing to configure.
"""

PYPROJECT = '''[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "__NAME__"
version = "0.1.0"
description = "__ENV_ID__: an envgym environment"
requires-python = ">=3.10"
dependencies = ["envgym"]

[project.optional-dependencies]
test = ["pytest>=8"]

# envgym finds the environment through this group: `envgym list` imports the entry point and
# calls it, and the function registers the id with its scripted baselines.
[project.entry-points."envgym.environments"]
__NAME__ = "__NAME__:register"

[tool.setuptools]
packages = ["__NAME__"]

[tool.pytest.ini_options]
testpaths = ["tests"]
'''

README = '''# __NAME__

`__ENV_ID__`, an envgym environment, made with `envgym init __NAME__`.

```bash
pip install -e .            # registers __ENV_ID__ through the `envgym.environments` entry point
envgym list                 # shows it
envgym check __ENV_ID__     # gymnasium/PettingZoo API, determinism, fuzzing, fork, close, hacks
envgym eval --env __ENV_ID__ --policy scripted:oracle --episodes 20
python -m pytest -q         # the package's own tests
```

Files: `__NAME__/env.py` (the environment), `__NAME__/policies.py` (the scripted `random`,
`oracle` and `hack_*` policies), `__NAME__/__init__.py` (registration), `tests/`.

Every reward should come with the policy that games it (a `hack_*` with a `ceiling`);
`envgym check` fails when a hack beats its ceiling.
'''

INIT = '''"""`__ENV_ID__`, registered when envgym loads the `envgym.environments` entry point."""

ENV_ID = "__ENV_ID__"


def register() -> None:
    """Called by envgym (entry point `__NAME__ = "__NAME__:register"` in pyproject.toml).
    Entry points are strings, so nothing is imported until the environment is made."""
    import envgym

    envgym.register(
        ENV_ID,
        "__NAME__.env:__CLASS__Env",
        description="__DESCRIPTION__",
        scripted={
            "random": "__NAME__.policies:RandomPolicy",
            "oracle": "__NAME__.policies:OraclePolicy",
            "hack_spray": "__NAME__.policies:HackSprayPolicy",
        },__MULTI_FLAG____GRADER_FIXTURES__
    )
'''

ENV = '''"""`__ENV_ID__`: sum a hidden ledger (the starter task `envgym init` writes; make it yours).

Each episode the seed picks a ledger of a few hidden amounts. The agent reads one entry per
turn with its one tool, `<read>N</read>`, and ends with `<answer>TOTAL</answer>`.

Reward components (they sum to the reward, which `envgym check` verifies):
  correct    +1.0 for the right total (the episode ends on any answer)
  tool_cost  -0.05 per read: the oracle reads every entry, so it ends at 1 - 0.05 * n
  format     -0.1 for a malformed action (`self.invalid`); the episode goes on, and after
             `max_invalid_actions` in a row it is truncated
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from envgym import StepResult, TextEnv, Tool, ToolCallError
from envgym.core import user
from envgym.errors import InvalidConfig
from envgym.tools import extract_tag, parse_tag_calls

READ_COST = -0.05
HINT = "Write <read>N</read> to read entry N, or <answer>TOTAL</answer> to finish."


class ReadArgs(BaseModel):
    index: int = Field(description="the entry to read, 1-based")


READ = Tool("read", "Read one hidden ledger entry by its 1-based number.", ReadArgs)


class __CLASS__Env(TextEnv):
    """One ledger per episode; see the module docstring for the protocol and rewards."""

    tools = (READ,)

    def __init__(self, *, min_entries: int = 2, max_entries: int = 4, max_turns: int = 8,
                 **kwargs: Any):
        if not 1 <= min_entries <= max_entries:
            raise InvalidConfig(f"need 1 <= min_entries <= max_entries, got "
                                f"{min_entries}, {max_entries}")
        super().__init__(max_turns=max_turns, **kwargs)
        self.min_entries, self.max_entries = min_entries, max_entries
        self.entries: list[int] = []
        self.read: set[int] = set()

    def _reset(self, seed: int, options: dict[str, Any]):
        rng = np.random.default_rng(seed)  # the seed alone picks the task
        n = int(rng.integers(self.min_entries, self.max_entries + 1))
        self.entries = [int(v) for v in rng.integers(1, 100, size=n)]
        self.read = set()
        self.task_id = f"ledger-{seed}"
        prompt = (f"A ledger holds {n} hidden amounts, numbered 1 to {n}. Find their total. "
                  + HINT)
        return [user(prompt)], {}

    def _step(self, action: str) -> StepResult:
        try:
            answer = extract_tag(action, "answer")
            calls = parse_tag_calls(action, self.tools) if answer is None else []
        except ToolCallError as e:  # bad actions never raise: they are explained
            return self.invalid(str(e), HINT)
        if answer is not None:
            return self._answer(answer)
        if len(calls) != 1:
            return self.invalid(f"expected one <read> call, got {len(calls)}.", HINT)
        return self._read(calls[0].arguments.index)

    def _read(self, index: int) -> StepResult:
        if not 1 <= index <= len(self.entries):
            return self.invalid(f"there is no entry {index}; entries are 1..{len(self.entries)}.")
        self.read.add(index)
        return StepResult([user(f"Entry {index}: {self.entries[index - 1]}")],
                          {"tool_cost": READ_COST},
                          info={"tool_calls": [{"name": "read", "arguments": {"index": index}}]})

    def _answer(self, text: str) -> StepResult:
        try:
            total = int(text.strip())
        except ValueError:  # "12 or 13", "about 40": one integer, or it is not an answer
            return self.invalid(f"the answer must be one integer, got {text.strip()[:40]!r}.")
        ok = total == sum(self.entries)
        return StepResult([user("Correct." if ok else "Wrong total.")], {"correct": float(ok)},
                          terminated=True, info={"outcome": {
                              "success": ok, "score": float(ok), "reads": len(self.read),
                              "read_all": len(self.read) == len(self.entries)}})

    def _state(self) -> Any:
        return {"task": self.task_id, "read": sorted(self.read)}
'''

GRADER_FIXTURES = '''"""Grader fixtures for `__ENV_ID__`: labelled actions and the judgement the grader must reach.

`envgym check` plays each case and fails when the reward says otherwise, so a weakened grader
(a rule deleted, a cost changed) is caught even where no `hack_*` policy exploits the gap
(`envgym.graders`). When you make the task yours, write one case per judgement it makes.
"""

from __future__ import annotations

from envgym.graders import GraderCase, Ordering


def _read_then(answer):
    """Read the next unread entry; once all are read, answer `answer(env)`."""
    def act(env, history, info):
        unread = [i for i in range(1, len(env.entries) + 1) if i not in env.read]
        return f"<read>{unread[0]}</read>" if unread else f"<answer>{answer(env)}</answer>"
    return act


HONEST = _read_then(lambda env: sum(env.entries))
WRONG = _read_then(lambda env: sum(env.entries) + 1)


def fixtures() -> list[GraderCase | Ordering]:
    honest = GraderCase("reading_every_entry_then_the_total_is_paid", (HONEST,) * 8,
                        {"component.correct": (1, 1), "terminated": (1, 1)})
    guess = GraderCase("a_blind_guess", ("<answer>0</answer>",),
                       {"component.correct": (0, 0), "terminated": (1, 1)})
    return [
        honest,
        guess,
        GraderCase("a_wrong_total_earns_nothing", (WRONG,) * 8,
                   {"component.correct": (0, 0), "terminated": (1, 1)}),
        GraderCase("each_read_costs", ("<read>1</read>",), {"component.tool_cost": (-0.05, -0.05)}),
        GraderCase("two_totals_are_not_an_answer", ("<answer>12 or 13</answer>",),
                   {"component.correct": (0, 0), "component.format": (-0.1, -0.1),
                    "terminated": (0, 0)}),
        Ordering("reading_beats_guessing", honest, guess, margin=0.5),
    ]
'''

POLICIES = '''"""Scripted policies for `__ENV_ID__`: honest baselines and an attack on the reward.

* `random`: reads a random entry, or one time in four guesses a total (a floor);
* `oracle`: reads every entry, then answers the sum (a ceiling; it may look at `env`);
* `hack_spray`: answers a run of numbers at once, hoping a lenient grader finds the total
  among them. Its `ceiling` says it must not beat `random`: `envgym check` plays both on the
  same 100 episodes and fails if it does. Write one such policy for every way you can think
  of to earn your reward without doing the task.
"""

from __future__ import annotations

from typing import Any

from envgym import ScriptedPolicy
from envgym.hacks import Ceiling
from envgym.spaces import Message


class RandomPolicy(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        if self.rng.random() < 0.25:
            return f"<answer>{int(self.rng.integers(2, 400))}</answer>"
        return f"<read>{int(self.rng.integers(1, 6))}</read>"


class OraclePolicy(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        unread = [i for i in range(1, len(env.entries) + 1) if i not in env.read]
        return f"<read>{unread[0]}</read>" if unread else f"<answer>{sum(env.entries)}</answer>"


class HackSprayPolicy(ScriptedPolicy):
    """Attack: every plausible total in one answer."""

    ceiling = Ceiling("random", metrics=("mean_reward", "success_rate"),
                      why="an answer is one integer; a list of guesses is a format error")

    def act(self, env: Any, messages: list[Message]) -> str:
        return "<answer>" + " ".join(str(t) for t in range(2, 400)) + "</answer>"
'''

TESTS = '''"""The tests a new envgym environment should have: it is registered, `envgym check` passes
(hacks included), the baselines order as they should, and the reward cannot be gamed."""

from __future__ import annotations

import subprocess
import sys

import pytest

import envgym
from envgym.checker import check
from envgym.evaluation import evaluate

from __NAME__ import ENV_ID


def test_registered_through_the_entry_point():
    assert ENV_ID in envgym.registry()  # needs `pip install -e .` (the entry point)
    assert {"random", "oracle", "hack_spray"} <= set(envgym.spec(ENV_ID).scripted)


def test_envgym_check_passes_hacks_included():
    report = check(ENV_ID)
    assert report.ok, report.render()
    assert any(name == "hacks" and "stay under" in detail for name, _, detail in report.results)


def test_envgym_check_command_exits_zero():
    done = subprocess.run([sys.executable, "-m", "envgym.cli", "check", ENV_ID],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_oracle_solves_every_task_and_random_does_not():
    oracle = evaluate(ENV_ID, "scripted:oracle", episodes=30)
    rand = evaluate(ENV_ID, "scripted:random", episodes=30)
    assert oracle["success_rate"] == 1.0 and oracle["errors"] == 0
    assert rand["mean_reward"] < oracle["mean_reward"] - 0.3


def test_the_seed_picks_the_task():
    a, b = envgym.make(ENV_ID), envgym.make(ENV_ID)
    a.reset(seed=3)
    b.reset(seed=3)
    assert a.entries == b.entries and a.task_id == b.task_id
    ledgers = set()
    for seed in range(20):
        a.reset(seed=seed)
        ledgers.add(tuple(a.entries))
    assert len(ledgers) > 15  # different seeds, different tasks


@pytest.mark.parametrize("action", ["", "<answer>12 13</answer>", "<read>99</read>",
                                    "<read>x</read>", "<answer>1</answer><answer>2</answer>"])
def test_malformed_actions_are_explained_not_raised(action):
    env = envgym.make(ENV_ID)
    env.reset(seed=0)
    obs, reward, terminated, _, info = env.step(action)
    assert not terminated and reward < 0 and "parse_error" in info
    assert obs[0]["content"].startswith("Invalid action")
'''

# ---- the multi-agent variant (`envgym init NAME --multi-agent`) ---------------------------------

MULTI_ENV = '''"""`__ENV_ID__`: two agents sum a split ledger (the multi-agent starter `envgym init
--multi-agent` writes; a PettingZoo `ParallelEnv` through `envgym.MultiAgentTextEnv`).

Each agent privately holds one amount. Round 1: every agent may share its amount with the
`say` tool, `<say>N</say>`. Round 2: every agent answers the total, `<answer>TOTAL</answer>`.

Reward components per agent (they sum to its reward):
  correct  +1.0 for the right total in round 2
  honest   -0.5 for saying an amount that is not the one it holds (lying to the peer)
  format   -0.1 for a malformed action (the episode goes on to its end regardless)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from envgym import MultiAgentTextEnv, Tool, ToolCallError
from envgym.core import system, user
from envgym.errors import InvalidConfig, ResetNeeded
from envgym.tools import extract_tag, parse_tag_calls


class SayArgs(BaseModel):
    amount: int = Field(description="the amount you hold")


SAY = Tool("say", "Tell the other agents the amount you hold.", SayArgs)
FORMAT_PENALTY = -0.1


class __CLASS__Env(MultiAgentTextEnv):
    """One split ledger per episode; see the module docstring."""

    metadata = {"render_modes": ["ansi"], "name": "__NAME__"}
    tools = (SAY,)

    def __init__(self, *, n_agents: int = 2, render_mode: str | None = None):
        if n_agents < 2:
            raise InvalidConfig(f"n_agents must be >= 2, got {n_agents}")
        super().__init__([f"agent_{i}" for i in range(n_agents)])
        self.render_mode = render_mode
        self.amounts: dict[str, int] = {}
        self.said: dict[str, int | None] = {}
        self.round, self.task_id = 0, None

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = self.seed_rng(seed)
        rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        values = rng.integers(1, 100, len(self.agents))
        self.amounts = {a: int(v) for a, v in zip(self.agents, values, strict=True)}
        self.said = dict.fromkeys(self.agents)
        self.round, self.task_id = 1, f"split-ledger-{seed}"
        obs = {a: [system(f"You are {a}."), user(
            f"You hold {self.amounts[a]}. The other agents hold one amount each. Round 1: "
            "share yours with <say>N</say>. Round 2: give the total of all amounts as "
            "<answer>TOTAL</answer>.")] for a in self.agents}
        return obs, {a: self._info(a) for a in self.agents}

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise ResetNeeded("step() called on a finished episode; call reset() first.")
        components, errors = {a: {} for a in self.agents}, {}
        for a in self.agents:
            text = actions.get(a) if isinstance(actions.get(a), str) else str(actions.get(a, ""))
            try:
                components[a] = self._act(a, text)
            except ToolCallError as e:
                components[a], errors[a] = {"format": FORMAT_PENALTY}, str(e)
        rewards = {a: float(sum(components[a].values())) for a in self.agents}
        done = self.round == 2
        obs = {a: [user(self._feedback(a, errors.get(a)))] for a in self.agents}
        infos = {a: self._info(a) | {"reward_components": components[a]} for a in self.agents}
        for a, error in errors.items():
            infos[a]["parse_error"] = error
        if done:
            for a in self.agents:
                infos[a]["outcome"] = {"success": components[a].get("correct", 0.0) > 0,
                                       "score": components[a].get("correct", 0.0)}
        self.round += 1
        agents, self.agents = list(self.agents), [] if done else self.agents
        return (obs, rewards, dict.fromkeys(agents, done), dict.fromkeys(agents, False), infos)

    def _act(self, agent: str, text: str) -> dict[str, float]:
        if self.round == 1:
            calls = parse_tag_calls(text, self.tools)
            if len(calls) != 1:
                raise ToolCallError("round 1: share your amount with one <say>N</say>.")
            self.said[agent] = calls[0].arguments.amount
            return {"honest": 0.0 if self.said[agent] == self.amounts[agent] else -0.5}
        answer = extract_tag(text, "answer", required=True)
        try:
            total = int(answer.strip())
        except ValueError:
            raise ToolCallError("round 2: the answer must be one integer.") from None
        return {"correct": float(total == sum(self.amounts.values()))}

    def _feedback(self, agent: str, error: str | None) -> str:
        head = f"Invalid action: {error}\\n" if error else ""
        if self.round == 1:
            said = "; ".join(f"{a}: {v if v is not None else '(nothing)'}"
                             for a, v in self.said.items() if a != agent)
            return head + f"The others said: {said}. Round 2: <answer>TOTAL</answer>."
        return head + "The episode is over."

    def _info(self, agent: str) -> dict[str, Any]:
        return {"task_id": self.task_id, "turn": self.round - 1}

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return f"round {self.round}: said {self.said}"
        return None
'''

MULTI_POLICIES = '''"""Scripted policies for `__ENV_ID__`.

The engine makes one instance per agent; each learns which agent it plays from the
`You are agent_k.` system message.

* `random`: says and answers random numbers (a floor);
* `oracle`: says its true amount, then answers the true total (it may look at `env`);
* `hack_spray`: answers a run of numbers at once. Its `ceiling` says it must not beat
  `random`; `envgym check` plays both and fails if it does.
"""

from __future__ import annotations

import re
from typing import Any

from envgym import ScriptedPolicy
from envgym.hacks import Ceiling
from envgym.spaces import Message

_AGENT = re.compile(r"You are (agent_\\d+)")


def agent_of(messages: list[Message]) -> str | None:
    for m in messages:
        match = _AGENT.search(str(m.get("content", ""))) if m.get("role") == "system" else None
        if match:
            return match.group(1)
    return None


class RandomPolicy(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        tag = "say" if env.round == 1 else "answer"
        return f"<{tag}>{int(self.rng.integers(1, 200))}</{tag}>"


class OraclePolicy(ScriptedPolicy):
    def act(self, env: Any, messages: list[Message]) -> str:
        if env.round == 1:
            return f"<say>{env.amounts[agent_of(messages)]}</say>"
        return f"<answer>{sum(env.amounts.values())}</answer>"


class HackSprayPolicy(ScriptedPolicy):
    """Attack: every plausible total in one answer."""

    ceiling = Ceiling("random", metrics=("mean_reward", "success_rate"),
                      why="an answer is one integer; a list of guesses is a format error")

    def act(self, env: Any, messages: list[Message]) -> str:
        if env.round == 1:
            return "<say>1</say>"
        return "<answer>" + " ".join(str(t) for t in range(2, 200)) + "</answer>"
'''

MULTI_TESTS = '''"""The tests a new multi-agent envgym environment should have: it is registered, `envgym
check` passes (PettingZoo API, determinism, fuzzing, fork, close, hacks), and the baselines
order as they should."""

from __future__ import annotations

import subprocess
import sys

import envgym
from envgym.checker import check
from envgym.evaluation import evaluate

from __NAME__ import ENV_ID


def test_registered_through_the_entry_point():
    assert ENV_ID in envgym.registry()  # needs `pip install -e .` (the entry point)
    assert envgym.spec(ENV_ID).multi_agent


def test_envgym_check_passes_hacks_included():
    report = check(ENV_ID)
    assert report.ok, report.render()


def test_envgym_check_command_exits_zero():
    done = subprocess.run([sys.executable, "-m", "envgym.cli", "check", ENV_ID],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_oracle_beats_random():
    oracle = evaluate(ENV_ID, {"*": "scripted:oracle"}, episodes=20)
    rand = evaluate(ENV_ID, {"*": "scripted:random"}, episodes=20)
    assert oracle["success_rate"] == 1.0
    assert rand["mean_reward"] < oracle["mean_reward"] - 0.5


def test_lying_costs_reward():
    env = envgym.make(ENV_ID)
    env.reset(seed=0)
    lie = env.amounts["agent_0"] + 1
    _, rewards, _, _, infos = env.step({"agent_0": f"<say>{lie}</say>", "agent_1": "<say>0</say>"})
    assert infos["agent_0"]["reward_components"]["honest"] == -0.5 == rewards["agent_0"]
'''

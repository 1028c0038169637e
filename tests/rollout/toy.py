"""Small deterministic environments that exercise the engine's paths."""

from __future__ import annotations

import time
from typing import Any

from envgym.core import StepResult, TextEnv, system, user
from envgym.multiagent import MultiAgentTextEnv
from envgym.scripted import ScriptedPolicy


class Echo(TextEnv):
    """Rewards actions containing 'a'; ends after `length` turns.

    `continuation=True` answers with spliced text (Search-R1 shape); `raise_on` makes step N
    raise for seeds in `raise_seeds`; `sleep` seconds per step.
    """

    def __init__(self, length: int = 3, continuation: bool = False, raise_on: int = 0,
                 raise_seeds: tuple[int, ...] = (), sleep: float = 0.0, **kw: Any):
        super().__init__(max_turns=kw.pop("max_turns", 20), **kw)
        self.length, self.continuation, self.sleep = length, continuation, sleep
        self.raise_on, self.raise_seeds = raise_on, raise_seeds

    def _reset(self, seed, options):
        self.seed_, self.task_id = seed, f"task-{seed}"
        return [system("Echo game."), user(f"Task {seed}: say something with an a.")], {}

    def _step(self, action):
        if self.sleep:
            time.sleep(self.sleep)
        if self.turn == self.raise_on and self.seed_ in self.raise_seeds:
            raise RuntimeError("boom on step 3")
        role = "continuation" if self.continuation else "user"
        done = self.turn >= self.length
        obs = [] if done else [{"role": role, "content": f"\n<information>turn {self.turn} ok"
                                                         f"</information>\n"}]
        spans = [{"kind": "first", "start": 0, "end": min(3, len(action))}] if action else []
        info = {"spans": spans}
        if done:
            info["outcome"] = {"success": "a" in action, "score": float("a" in action)}
        return StepResult(obs, {"hit": float("a" in action)}, terminated=done, info=info)


class SayA(ScriptedPolicy):
    def act(self, env, messages):
        return f"a{len(messages)}-{int(self.rng.integers(10))}"


class Pair(MultiAgentTextEnv):
    """Two agents talk for two rounds; each sees the other's last message."""

    def __init__(self):
        super().__init__(["alice", "bob"], trainable={"bob": False})

    def reset(self, seed=None, options=None):
        self.seed_rng(seed)
        self.agents, self.round = list(self.possible_agents), 0
        obs = {a: [user(f"You are {a}. Say hi.")] for a in self.agents}
        return obs, {a: {"task_id": f"pair-{seed}"} for a in self.agents}

    def step(self, actions):
        self.round += 1
        done = self.round >= 2
        other = {"alice": "bob", "bob": "alice"}
        obs = {a: [] if done else [user(f"{other[a]} said: {actions[other[a]][:20]}")]
               for a in self.agents}
        rewards = {a: float(len(actions[a]) > 0) for a in self.agents}
        infos = {a: {"reward_components": {"spoke": rewards[a]}} for a in self.agents}
        if done:
            for a in self.agents:
                infos[a]["outcome"] = {"success": True, "score": 1.0}
        terms = {a: done for a in self.agents}
        if done:
            self.agents = []
        return obs, rewards, terms, {a: False for a in terms}, infos

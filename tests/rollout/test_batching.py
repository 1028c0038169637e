"""The engine's batcher and thread pool: one generate per turn, bounded workers."""

from __future__ import annotations

import threading
import time

import envgym.rollout as rollout
from envgym.core import StepResult, TextEnv, user
from envgym.policy import Completion
from envgym.rollout import collect


class Uneven(TextEnv):
    """`length` turns; each step sleeps `delay(seed)` seconds and notes its worker thread."""

    threads: set[int] = set()

    def __init__(self, length=3, delays=None):
        super().__init__(max_turns=50)
        self.length, self.delays = length, delays or {}

    def _reset(self, seed, options):
        self.seed_ = seed
        time.sleep(self.delays.get(seed, 0.0))
        return [user(f"task {seed}")], {}

    def _step(self, action):
        Uneven.threads.add(threading.get_ident())
        time.sleep(self.delays.get(self.seed_, 0.0))
        done = self.turn >= self.length
        return StepResult([] if done else [user("again")], {"r": 1.0}, terminated=done)


class Recorder:
    """A text policy that records how many prompts each generate call got."""

    name, tokenizer = "recorder", None

    def __init__(self, cost: float = 0.0):
        self.sizes, self.times, self.cost = [], [], cost

    def generate(self, prompts, sampling):
        self.sizes.append(len(prompts))
        self.times.append(time.perf_counter())
        time.sleep(self.cost)
        return [Completion("ok") for _ in prompts]


def test_every_turn_is_one_generate_over_all_episodes():
    # steps take 0-30 ms, spread over the episodes: all must still meet in one call per turn
    delays = {s: 0.002 * s for s in range(16)}
    policy = Recorder(cost=0.01)
    trajs = collect(lambda: Uneven(length=3, delays=delays), policy, episodes=4, group_size=4,
                    seed=0, batch_wait=0.2)  # generous: a loaded CI box starves the loop
    assert all(t.error is None and len(t.turns) == 3 for t in trajs)
    assert policy.sizes == [16, 16, 16]


def test_a_straggler_does_not_hold_up_the_others():
    policy = Recorder()
    start = time.perf_counter()
    collect(lambda: Uneven(length=2, delays={3: 1.5}), policy, episodes=4, batch_wait=0.2)
    assert policy.sizes == [3, 3, 1, 1]
    # the other three finished both turns while the straggler was still resetting
    assert policy.times[1] - start < 1.4 < policy.times[2] - start


def test_environment_threads_are_bounded(monkeypatch):
    monkeypatch.setattr(rollout, "ENV_THREADS", 3)
    Uneven.threads = set()
    trajs = collect(lambda: Uneven(length=2, delays={s: 0.02 for s in range(32)}), Recorder(),
                    episodes=32, concurrency=32)
    assert all(t.error is None for t in trajs) and len(Uneven.threads) <= 3


def test_waiting_for_a_free_worker_is_not_step_time(monkeypatch):
    # 8 episodes x 0.2 s steps on 2 workers queue for 0.8 s, yet each step takes 0.2 s
    monkeypatch.setattr(rollout, "ENV_THREADS", 2)
    trajs = collect(lambda: Uneven(length=1, delays={s: 0.2 for s in range(8)}), Recorder(),
                    episodes=8, step_timeout=0.5)
    assert [t.error for t in trajs] == [None] * 8

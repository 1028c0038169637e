"""Multi-turn rollout speed with KV reuse on vs off (HF backend); one JSON line per setting.

    python bench/multiturn.py [--tiny DIR] [--model PATH] [--episodes 4] [--group 4]
                              [--max-tokens 16] [--repeats 2] [--threads 1]

Settings: TimeSeries-v0 (5 turns) and `Tool16`, a synthetic tool environment of 16 turns
(a ~120-token task, then a ~25-token tool result each turn). Each setting runs off, on,
off, on ... (`--repeats` pairs, A B A B) with the same seeds, and checks that both produce
the same token ids. Reported per setting:

* `rollout_s_off` / `rollout_s_on` (medians) and `speedup` = off / on;
* `prefill_per_unique_token` (on) and `..._off`: tokens run through the model as prompt
  (prefill) divided by the unique context tokens of the rollout, i.e. the nodes of the
  token trie of all final sequences (a group's shared prompt counts once; sampled tokens
  count, though decoding, not prefill, computes them). 1.0 is "each context token once";
  without reuse it grows with the number of turns.

Goals (issue 27): speedup >= 2 at 16 turns, prefill_per_unique_token <= 1.1. The default
model is the tiny test model, where per-token Python overhead weighs more than on a real
one; `--model` takes any local HF causal LM.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import torch

from envgym.core import StepResult, TextEnv, system, user
from envgym.policy import SamplingParams
from envgym.rollout import collect

FACTS = "The tool returns one reading per call; combine them into a final estimate. " * 5


class Tool16(TextEnv):
    """16 turns of tool calls: every action is answered by a reading, the last ends it."""

    def __init__(self, turns: int = 16):
        super().__init__(max_turns=turns)
        self.turns = turns

    def _reset(self, seed, options):
        self.task_id, self.value = str(seed), seed * 7 % 101
        return [system(FACTS), user(f"Task {seed}: estimate the quantity with the tool.")], {}

    def _step(self, action):
        done = self.turn >= self.turns
        reading = (f"<result>reading {self.turn}: {self.value + self.turn} units, "
                   f"noise 0.{self.turn * 3 % 10}</result>")
        return StepResult([] if done else [user(reading)], {"r": 0.0}, terminated=done)


def unique_tokens(trajs) -> int:
    """Nodes of the token trie of all final sequences (shared prefixes counted once)."""
    seqs = sorted(tuple(i for t in traj.turns for i in t.obs_token_ids + t.action_token_ids)
                  for traj in trajs)
    total, prev = 0, ()
    for s in seqs:
        common = 0
        for a, b in zip(s, prev):
            if a != b:
                break
            common += 1
        total += len(s) - common
        prev = s
    return total


def run(setting, env, policies, args) -> dict:
    times = {True: [], False: []}
    prefill = {True: 0, False: 0}
    ids = {}
    unique = 0
    for _ in range(args.repeats):
        for flag in (False, True):  # A B A B
            policy = policies[flag]
            policy.prefill_tokens = 0
            start = time.perf_counter()
            trajs = collect(env, policy, episodes=args.episodes, group_size=args.group, seed=1,
                            sampling=SamplingParams(max_tokens=args.max_tokens, seed=3))
            times[flag].append(time.perf_counter() - start)
            prefill[flag] = policy.prefill_tokens
            ids[flag] = [[t.action_token_ids for t in x.turns] for x in trajs]
            unique = unique_tokens(trajs)
    off, on = statistics.median(times[False]), statistics.median(times[True])
    turns = statistics.mean(len(x) for x in ids[True])
    return {"setting": setting, "turns": round(turns, 2), "episodes": args.episodes * args.group,
            "rollout_s_off": round(off, 3), "rollout_s_on": round(on, 3),
            "speedup": round(off / on, 3),
            "prefill_per_unique_token": round(prefill[True] / unique, 3),
            "prefill_per_unique_token_off": round(prefill[False] / unique, 3),
            "unique_tokens": unique, "same_ids": ids[True] == ids[False]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--episodes", type=int, default=4)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    path = args.model
    if path is None:
        from envgym.agents.tiny import build_tiny_model
        path = str(build_tiny_model(args.tiny or tempfile.mkdtemp(), include_envs=False))
    from envgym.agents.policies.hf import HFPolicy
    on = HFPolicy(path, device="cpu")
    off = HFPolicy(path, device="cpu", model=on.model, tokenizer=on.tokenizer, kv_reuse=False)
    policies = {True: on, False: off}
    for setting, env in (("TimeSeries-v0", "envgym/TimeSeries-v0"), ("Tool16", Tool16)):
        print(json.dumps(run(setting, env, policies, args)), flush=True)


if __name__ == "__main__":
    main()

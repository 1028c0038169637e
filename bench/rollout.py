"""Rollout-engine benchmarks; prints one JSON line per measurement.

    python bench/rollout.py [--tiny DIR] [--episodes 64] [--repeats 5]

1. Environment steps per second, engine vs a naive sequential loop, with a zero-latency fake
   policy, for an environment that returns at once and one that sleeps 10 ms per step.
2. Engine overhead: a whole step's rollout (`collect`, 4 tasks x 4 samples of the arithmetic
   task, 64 tokens) against one batched `policy.generate` of the very same 16 prompts, run
   alternately A B A B. Goal: rollout <= 1.2x generate, in one generate call.
3. Long episodes: the per-turn cost of the observation delta (windowed render + append-only
   check, full check on schedule) at 8/32/128 turns, against re-rendering and re-tokenising
   the whole conversation. Goal: per-turn cost at 128 turns <= 1.3x that at 8.
Timings on a shared CPU are noisy: each figure is the median of `--repeats` interleaved runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from envgym.core import StepResult, TextEnv, system, user
from envgym.policy import Completion, SamplingParams
from envgym.rollout import collect


class Sleepy(TextEnv):
    def __init__(self, sleep: float = 0.0, length: int = 8):
        super().__init__(max_turns=100)
        self.sleep, self.length = sleep, length

    def _reset(self, seed, options):
        self.task_id = str(seed)
        return [system("bench"), user(f"task {seed}")], {}

    def _step(self, action):
        if self.sleep:
            time.sleep(self.sleep)
        done = self.turn >= self.length
        return StepResult([] if done else [user(f"obs {self.turn}")], {"r": 1.0}, terminated=done,
                          info={"outcome": {"success": True, "score": 1.0}} if done else {})


class FakePolicy:
    """Zero-latency text policy."""
    name, tokenizer = "fake", None

    def generate(self, prompts, sampling):
        return [Completion("ok") for _ in prompts]


def sequential(make, policy, episodes: int) -> int:
    steps = 0
    for i in range(episodes):
        env = make()
        obs, _ = env.reset(seed=i)
        messages, done = list(obs), False
        while not done:
            text = policy.generate([messages], SamplingParams())[0].text
            obs, _, term, trunc, _ = env.step(text)
            messages += [{"role": "assistant", "content": text}, *obs]
            steps, done = steps + 1, term or trunc
        env.close()
    return steps


def bench_engine(episodes: int) -> None:
    for sleep in (0.0, 0.01):
        make = lambda: Sleepy(sleep)  # noqa: E731
        start = time.perf_counter()
        steps = sequential(make, FakePolicy(), episodes)
        seq = steps / (time.perf_counter() - start)
        start = time.perf_counter()
        trajs = collect(make, FakePolicy(), episodes=episodes, concurrency=episodes)
        eng = sum(len(t.turns) for t in trajs) / (time.perf_counter() - start)
        print(json.dumps({"bench": "engine_vs_sequential", "env_sleep_ms": sleep * 1000,
                          "episodes": episodes, "sequential_steps_per_s": round(seq, 1),
                          "engine_steps_per_s": round(eng, 1), "speedup": round(eng / seq, 2)}))


def bench_rollout_vs_generate(tiny: str, repeats: int, threads: int, tasks: int = 4,
                              group: int = 4, max_tokens: int = 64) -> None:
    """A (one batched generate of the step's prompts) vs B (the engine rolling out the step)."""
    import arith

    from envgym.policy import load_policy
    policy = load_policy(f"hf:{tiny}", device="cpu", threads=threads)
    sampling = SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=0)
    prompts = [policy.chat.prompt_ids(arith.ArithEnv().reset(seed=j)[0])
               for j in range(tasks) for _ in range(group)]
    inner, calls = policy.generate, []

    def counted(batch, params):
        start = time.perf_counter()
        out = inner(batch, params)
        calls.append((len(batch), time.perf_counter() - start,
                      sum(len(c.token_ids) for c in out)))
        return out
    policy.generate = counted
    policy.generate(prompts, sampling)  # warm-up
    gen, roll, inside, sizes, tokens = [], [], [], [], [0, 0]
    for _ in range(repeats):
        calls.clear()
        start = time.perf_counter()
        policy.generate(prompts, sampling)
        gen.append(time.perf_counter() - start)
        tokens[0] += calls[0][2]
        calls.clear()
        start = time.perf_counter()
        collect(arith.ENV_ID, policy, episodes=tasks, group_size=group, sampling=sampling)
        roll.append(time.perf_counter() - start)
        inside.append(sum(c[1] for c in calls))
        sizes.append([c[0] for c in calls])
        tokens[1] += sum(c[2] for c in calls)
    g, r = statistics.median(gen), statistics.median(roll)
    print(json.dumps({
        "bench": "rollout_vs_generate", "prompts": tasks * group, "max_tokens": max_tokens,
        "repeats": repeats, "generate_s": round(g, 3), "rollout_s": round(r, 3),
        "generate_inside_engine_s": round(statistics.median(inside), 3),
        "ratio": round(r / g, 3), "goal": "<= 1.2", "meets_goal": r / g <= 1.2,
        "generate_calls_per_rollout": sizes,
        "tokens_per_generate": tokens[0] / repeats, "tokens_per_rollout": tokens[1] / repeats}))


def _episode_costs(chat, turns: int, unwindowed) -> tuple[list[float], ...]:
    """Seconds of each turn of one `turns`-turn episode: (delta, full re-tokenisation, the
    delta rendered from the whole conversation as before windows).

    The two are timed in separate passes: re-tokenising 100 kB between two delta calls
    evicts the caches the next delta call would use, and that would be billed to the delta.
    """
    obs = "The retrieved passage says the river is 6,650 km long. " * 8
    act = "<think>I should search again.</think> <search>nile length km</search> " * 6
    costs: tuple[list[float], ...] = ([], [], [])
    for kind, out in enumerate(costs):
        messages = [{"role": "user", "content": obs}]
        for _ in range(turns):
            messages.append({"role": "assistant", "content": act})
            new = [{"role": "user", "content": obs}]
            start = time.perf_counter()
            if kind == 0:
                chat.observation_ids(messages, new, ended_with_eos=True)
            elif kind == 1:
                chat.prompt_ids([*messages, *new])
            else:
                unwindowed.observation_ids(messages, new, ended_with_eos=True)
            out.append(time.perf_counter() - start)
            messages += new
    return costs


def bench_tokenisation(tiny: str, repeats: int) -> None:
    """Per-turn cost amortised over an episode (the scheduled full checks included). Each
    turn's time is its minimum over the interleaved repeats: on a loaded CPU a long episode is
    always preempted somewhere, and preemption only ever adds time."""
    from transformers import AutoTokenizer

    from envgym.tokens import ChatTokenizer
    tok = AutoTokenizer.from_pretrained(tiny)
    chat, unwindowed = ChatTokenizer(tok), ChatTokenizer(tok)
    unwindowed.windowed = False
    lengths = (8, 32, 128)
    runs: dict[int, list[tuple[list[float], ...]]] = {n: [] for n in lengths}
    for _ in range(repeats):  # interleaved, so load spikes hit every length alike
        for n in lengths:
            runs[n].append(_episode_costs(chat, n, unwindowed))
    per_turn, full_turn, before = {}, {}, {}
    for n in lengths:
        per_turn[n], full_turn[n], before[n] = (
            statistics.fmean(map(min, zip(*(r[k] for r in runs[n])))) for k in range(3))
        print(json.dumps({"bench": "delta_per_turn", "turns": n, "windowed": chat.windowed,
                          "delta_ms_per_turn": round(per_turn[n] * 1e3, 3),
                          "unwindowed_delta_ms_per_turn": round(before[n] * 1e3, 3),
                          "full_retokenise_ms_per_turn": round(full_turn[n] * 1e3, 3),
                          "full_over_delta": round(full_turn[n] / per_turn[n], 2)}))
    growth = per_turn[128] / per_turn[8]
    print(json.dumps({"bench": "delta_growth", "per_turn_128_over_8": round(growth, 3),
                      "unwindowed_128_over_8": round(before[128] / before[8], 2),
                      "full_retokenise_128_over_8": round(full_turn[128] / full_turn[8], 2),
                      "goal": "<= 1.3", "meets_goal": growth <= 1.3}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tiny", help="tiny model dir (built when omitted)")
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (on a shared 2-core box, 2 threads spin-wait "
                             "on each other and one call can take 30 s)")
    args = parser.parse_args()
    bench_engine(args.episodes)
    tiny = args.tiny
    if tiny is None:
        from envgym.agents.tiny import build_tiny_model
        tiny = str(build_tiny_model(tempfile.mkdtemp(), include_envs=False))
    bench_rollout_vs_generate(tiny, args.repeats, args.threads)
    bench_tokenisation(tiny, args.repeats)


if __name__ == "__main__":
    main()

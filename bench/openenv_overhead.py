"""What serving over OpenEnv costs: steps per second in-process vs. through `openenv:URL`.

Same environment (TimeSeries-v0), same seeds, same scripted actions; rounds alternate
in-process (A) and remote (B) so machine load hits both alike. The remote side is the whole
path a trainer pays for: envgym's `OpenEnvEnv` → openenv-core's client → WebSocket → openenv's
server → the environment, and back. Prints one JSON line.

    python bench/openenv_overhead.py [--episodes 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import threading
import time

import envgym

ENV = "envgym/TimeSeries-v0"
ACTIONS = ['<think>x</think><tool_call>{"name": "timeseries_zoom_in_tool", "arguments": '
           '{"ts_seg": [0, 300]}}</tool_call>', "junk", "<answer>ACCEPT</answer>",
           "<answer>A</answer>"]


def run(env_id: str, episodes: int) -> tuple[int, float]:
    env = envgym.make(env_id)
    steps, start = 0, time.perf_counter()
    try:
        for seed in range(episodes):
            env.reset(seed=seed)
            for action in ACTIONS:
                steps += 1
                _, _, term, trunc, _ = env.step(action)
                if term or trunc:
                    break
    finally:
        env.close()
    return steps, time.perf_counter() - start


def main() -> None:
    import uvicorn

    from envgym.integrations.openenv.server import ServerConfig, build_app

    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(build_app(ServerConfig(ENV, {})), host="127.0.0.1",
                                           port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    rates: dict[str, list[float]] = {"in_process": [], "openenv": []}
    for _ in range(args.rounds):  # A B A B
        for name, env_id in (("in_process", ENV), ("openenv", f"openenv:http://127.0.0.1:{port}")):
            steps, seconds = run(env_id, args.episodes)
            rates[name].append(steps / seconds)
    server.should_exit = True
    a, b = statistics.median(rates["in_process"]), statistics.median(rates["openenv"])
    print(json.dumps({"bench": "openenv_overhead", "env": ENV, "episodes": args.episodes,
                      "rounds": args.rounds, "in_process_steps_per_s": round(a, 1),
                      "openenv_steps_per_s": round(b, 1),
                      "openenv_ms_per_step_extra": round(1000 * (1 / b - 1 / a), 2),
                      "verdict": f"openenv is {a / b:.1f}x slower per step than in-process"}))


if __name__ == "__main__":
    main()

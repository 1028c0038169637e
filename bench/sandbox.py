"""Sandbox benchmark: one JSON line per measurement.

    python bench/sandbox.py [--repeats 21] [--programs 32] [--workers N]

Measures, per available backend: the median latency of a trivial Python run and of a C++
compile + run; judged programs per second at pool size 1 and N; and the bwrap/subprocess
ratio of the Python medians (issue 3 asks for <= 3x), measured with the backends run
alternately so that a drifting load on a shared machine does not skew it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import warnings

from envgym.errors import SandboxUnavailable
from envgym.sandbox import get_backend, judge_many, run

CPP = "#include <cstdio>\nint main(){ puts(\"hi\"); }"


def emit(**fields) -> None:
    print(json.dumps(fields), flush=True)


def latency(backend, source: str, language: str) -> float:
    start = time.perf_counter()
    ex = run(source, language, backend=backend)
    elapsed = time.perf_counter() - start
    assert ex.verdict.value == "AC", ex
    return elapsed


def median_latency(backend, source: str, language: str, repeats: int) -> float:
    return statistics.median(latency(backend, source, language) for _ in range(repeats))


def interleaved_medians(backends: dict, source: str, language: str,
                        repeats: int) -> dict[str, float]:
    """Alternate the backends run by run, so that a load that drifts during the benchmark
    (a shared machine) weighs on each of them alike and their ratio stays fair."""
    times: dict[str, list[float]] = {name: [] for name in backends}
    for _ in range(repeats):
        for name, backend in backends.items():
            times[name].append(latency(backend, source, language))
    return {name: statistics.median(ts) for name, ts in times.items()}


def throughput(backend, programs: int, workers: int) -> float:
    subs = [{"source": f"print(sum(range({i} * 1000)))", "language": "python",
             "tests": [{"input": "", "output": str(sum(range(i * 1000)))}]}
            for i in range(programs)]
    start = time.perf_counter()
    out = judge_many(subs, workers=workers, backend=backend)
    elapsed = time.perf_counter() - start
    assert all(j.accepted for j in out)
    return programs / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--cpp-repeats", type=int, default=5)
    parser.add_argument("--programs", type=int, default=32)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    backends = {}
    for name in ("bwrap", "subprocess", "docker"):
        try:
            backends[name] = get_backend(name)
        except SandboxUnavailable as exc:
            emit(bench="sandbox.available", backend=name, available=False, reason=str(exc)[:200])
    for backend in backends.values():
        latency(backend, "pass", "python")  # warm the page cache before measuring
    medians = interleaved_medians(backends, "pass", "python", args.repeats)
    for name, backend in backends.items():
        emit(bench="sandbox.python_trivial_median_s", backend=name,
             value=round(medians[name], 4), repeats=args.repeats, load=os.getloadavg()[0])
        emit(bench="sandbox.cpp_compile_run_median_s", backend=name,
             value=round(median_latency(backend, CPP, "cpp", args.cpp_repeats), 4),
             repeats=args.cpp_repeats)
        for workers in sorted({1, args.workers}):
            emit(bench="sandbox.judged_programs_per_s", backend=name, workers=workers,
                 value=round(throughput(backend, args.programs, workers), 2),
                 programs=args.programs)
    if "bwrap" in medians and "subprocess" in medians:
        emit(bench="sandbox.bwrap_over_subprocess", value=round(
            medians["bwrap"] / medians["subprocess"], 3), goal_max=3.0)


if __name__ == "__main__":
    main()

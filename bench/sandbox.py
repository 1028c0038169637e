"""Sandbox benchmark: one JSON line per measurement.

    python bench/sandbox.py [--repeats 21] [--programs 32] [--workers N]

Measures, per available backend: the median latency of a trivial Python run and of a C++
compile + run; judged programs per second at pool size 1 and N; and the bwrap/subprocess
ratio of the Python medians (issue 3 asks for <= 3x).
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


def median_latency(backend, source: str, language: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        ex = run(source, language, backend=backend)
        times.append(time.perf_counter() - start)
        assert ex.verdict.value == "AC", ex
    return statistics.median(times)


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
    medians = {}
    for name in ("bwrap", "subprocess", "docker"):
        try:
            backend = get_backend(name)
        except SandboxUnavailable as exc:
            emit(bench="sandbox.available", backend=name, available=False, reason=str(exc)[:200])
            continue
        medians[name] = median_latency(backend, "pass", "python", args.repeats)
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

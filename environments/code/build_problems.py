"""Build `data/problems.jsonl` from the problem sources in `data/problems/*.py`.

Each source module defines TITLE, DIFFICULTY, TAGS, STATEMENT, PUBLIC (example inputs),
`hidden(rng) -> list[str]` (seeded; the last input is the maximal-size one), REF_PY, REF_CPP
and WRONG_PY (optionally TIME_LIMIT_S, MEMORY_MB). Expected outputs are produced here by
running the Python reference and cross-checked against the C++ reference, and the wrong
solution must pass every public example yet fail some hidden test, so a broken problem never
ships. This runs our own trusted code with plain subprocesses; it is a developer tool:

    python -m envgym.environments.code.build_problems
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).parent
SOURCES = HERE / "data" / "problems"
OUT = HERE / "data" / "problems.jsonl"


def load_source(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_problem_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seed_of(slug: str) -> int:
    return int(hashlib.sha256(slug.encode()).hexdigest()[:8], 16)


def tokens(text: str) -> list[str]:
    return text.split()


def run(cmd: list[str], stdin: str) -> str:
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {done.stderr[-500:]}")
    return done.stdout


def compile_cpp(source: str, workdir: Path) -> Path:
    src, exe = workdir / "ref.cpp", workdir / "ref"
    src.write_text(source)
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", str(exe), str(src)], check=True)
    return exe


def build_one(path: Path, workdir: Path) -> dict:
    m = load_source(path)
    slug = path.stem
    rng = random.Random(seed_of(slug))
    hidden_inputs = m.hidden(rng)
    assert len(hidden_inputs) >= 10, f"{slug}: needs >= 10 hidden tests"
    ref_py = workdir / f"{slug}.py"
    ref_py.write_text(m.REF_PY)
    wrong_py = workdir / f"{slug}_wrong.py"
    wrong_py.write_text(m.WRONG_PY)
    exe = compile_cpp(m.REF_CPP, workdir)
    public, hidden, wrong_fails = [], [], 0
    for kind, inputs in (("public", m.PUBLIC), ("hidden", hidden_inputs)):
        for stdin in inputs:
            expected = run([sys.executable, str(ref_py)], stdin)
            if tokens(run([str(exe)], stdin)) != tokens(expected):
                raise RuntimeError(f"{slug}: C++ and Python references disagree on a {kind} test")
            try:
                wrong_ok = tokens(run([sys.executable, str(wrong_py)], stdin)) == tokens(expected)
            except (RuntimeError, subprocess.TimeoutExpired):
                wrong_ok = False
            if kind == "public" and not wrong_ok:
                raise RuntimeError(f"{slug}: the wrong solution must pass the public examples")
            wrong_fails += not wrong_ok
            (public if kind == "public" else hidden).append({"input": stdin, "output": expected})
    if not wrong_fails:
        raise RuntimeError(f"{slug}: the wrong solution passes every hidden test")
    return {
        "id": slug, "title": m.TITLE, "difficulty": m.DIFFICULTY, "tags": list(m.TAGS),
        "statement": m.STATEMENT.strip(), "time_limit_s": getattr(m, "TIME_LIMIT_S", 2.0),
        "memory_mb": getattr(m, "MEMORY_MB", 256), "public_tests": public,
        "hidden_tests": hidden, "solutions": {"python": m.REF_PY, "cpp": m.REF_CPP},
        "wrong_solution": {"python": m.WRONG_PY}, "wrong_fails": wrong_fails,
    }


def main(only: list[str]) -> None:
    paths = sorted(SOURCES.glob("*.py"))
    existing = {}
    if OUT.exists() and only:
        existing = {r["id"]: r for r in map(json.loads, OUT.read_text().splitlines())}
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            if only and path.stem not in only:
                continue
            record = build_one(path, Path(tmp))
            existing[record["id"]] = record
            print(f"{record['id']}: {len(record['hidden_tests'])} hidden, "
                  f"wrong fails {record['wrong_fails']}", file=sys.stderr)
    known = {p.stem for p in paths}
    lines = [json.dumps(existing[k], sort_keys=True) for k in sorted(existing) if k in known]
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} problems, {OUT.stat().st_size / 1e6:.2f} MB", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])

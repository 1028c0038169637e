"""Parsers for the public competitive-programming formats users bring.

Each starts from the *stored* form (see shared/reference/dataset_formats.md): APPS/TACO keep
their tests as JSON text, LiveCodeBench keeps private tests as JSON text or
base64(zlib(pickle(JSON text))), CodeContests keeps tests and solutions as parallel lists.
Only stdin/stdout problems are kept; call-based ones (`fn_name`, LeetCode `functional`) are
skipped because this environment judges whole programs.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import pickle
import re
import zlib
from collections.abc import Callable
from typing import Any

from envgym.errors import DatasetError

from .problems import Problem, from_envgym
from .rules import RULES

__all__ = ["FORMATS", "decode_lcb_private", "detect_format", "parse_records"]

CC_LANGUAGES = {2: "cpp", 3: "python"}  # CodeContests enum; 1 is Python 2, never run as 3


def detect_format(record: dict[str, Any]) -> str:
    if "hidden_tests" in record:
        return "envgym"
    if "question_content" in record:
        return "livecodebench"
    if "input_output" in record:
        return "taco" if "raw_tags" in record or "skill_types" in record else "apps"
    if "description" in record and ("public_tests" in record or "private_tests" in record):
        return "codecontests"
    raise DatasetError(f"cannot tell the dataset format from keys {sorted(record)}; pass "
                       "dataset_format= one of " + ", ".join(sorted(FORMATS)))


def _json_text(value: Any, what: str) -> Any:
    if not isinstance(value, str):
        return value
    if not value.strip():
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{what} is not valid JSON text ({e.msg})") from None


def _text(value: Any) -> str:
    """APPS stores a test as a string or as a list of lines."""
    return "\n".join(map(str, value)) + "\n" if isinstance(value, list) else str(value)


def _pairs(inputs: list[Any], outputs: list[Any]) -> list[dict[str, str]]:
    return [{"input": _text(i), "output": _text(o)} for i, o in zip(inputs, outputs)]


# ---- CodeContests ----------------------------------------------------------------------------

def _cc_tests(value: Any) -> list[dict[str, str]]:
    if not value:
        return []
    if isinstance(value, dict):
        return _pairs(list(value.get("input", [])), list(value.get("output", [])))
    return [{"input": t["input"], "output": t["output"]} for t in value]  # proto-style list


def _cc_solutions(value: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if isinstance(value, dict):
        for lang, src in zip(value.get("language", []), value.get("solution", [])):
            if int(lang) in CC_LANGUAGES:
                out.setdefault(CC_LANGUAGES[int(lang)], []).append(src)
    return out


def _cc_time(value: Any) -> float:
    if isinstance(value, dict):
        seconds = (value.get("seconds") or 0) + (value.get("nanos") or 0) / 1e9
        return float(seconds) or 2.0
    return float(value) if value else 2.0


def from_codecontests(record: dict[str, Any], index: int) -> Problem | None:
    public = _cc_tests(record.get("public_tests"))
    hidden = _cc_tests(record.get("private_tests")) + _cc_tests(record.get("generated_tests"))
    memory = record.get("memory_limit_bytes") or 256 * 2**20
    return _finish(Problem(
        id=str(record.get("name") or f"codecontests-{index}"), title=str(record.get("name", "")),
        statement=record.get("description", ""), public_tests=public, hidden_tests=hidden,
        difficulty=str(record.get("cf_rating") or record.get("difficulty") or "unknown"),
        tags=list(record.get("cf_tags") or []), time_limit_s=_cc_time(record.get("time_limit")),
        memory_mb=max(64, int(memory) // 2**20), solutions=_cc_solutions(record.get("solutions")),
        wrong_solutions=_cc_solutions(record.get("incorrect_solutions")), source="codecontests"))


# ---- APPS / TACO -----------------------------------------------------------------------------

def _parse_limit(text: Any, unit_re: str, default: float) -> float:
    match = re.search(r"([\d.]+)\s*" + unit_re, str(text or ""), re.I)
    return float(match.group(1)) if match else default


def from_apps(record: dict[str, Any], index: int, source: str = "apps") -> Problem | None:
    io_spec = _json_text(record.get("input_output"), "input_output") or {}
    if io_spec.get("fn_name"):
        return None
    tests = _pairs(io_spec.get("inputs", []), io_spec.get("outputs", []))
    solutions = _json_text(record.get("solutions"), "solutions") or []
    tags = record.get("tags") or record.get("raw_tags") or "[]"
    ident = record.get("problem_id", record.get("name") or index)
    return _finish(Problem(
        id=f"{source}-{ident}", title=str(record.get("name") or record.get("url") or ident),
        statement=record.get("question", ""), public_tests=tests[:1], hidden_tests=tests[1:],
        difficulty=str(record.get("difficulty") or "unknown"),
        tags=list(ast.literal_eval(tags)) if isinstance(tags, str) else list(tags),
        time_limit_s=_parse_limit(record.get("time_limit"), r"sec", 2.0),
        memory_mb=int(_parse_limit(record.get("memory_limit"), r"mega", 256)),
        solutions={"python": list(solutions)} if solutions else {}, source=source))


def from_taco(record: dict[str, Any], index: int) -> Problem | None:
    return from_apps(record, index, source="taco")


# ---- LiveCodeBench ---------------------------------------------------------------------------

class _NoClasses(pickle.Unpickler):
    """LiveCodeBench's pickle holds one str; refusing every class keeps loading code-free."""

    def find_class(self, module: str, name: str) -> Any:
        raise DatasetError(f"refusing to unpickle {module}.{name} from private_test_cases")


def decode_lcb_private(blob: str) -> list[dict[str, Any]]:
    """JSON text, or base64(zlib(pickle(JSON text))) as LiveCodeBench stores it."""
    try:
        return json.loads(blob)
    except (json.JSONDecodeError, TypeError):
        pass
    try:
        raw = zlib.decompress(base64.b64decode(blob.encode("utf-8")))
        text = _NoClasses(io.BytesIO(raw)).load()
        return json.loads(text)
    except DatasetError:
        raise
    except Exception as e:
        raise DatasetError(f"private_test_cases is neither JSON nor base64/zlib/pickle: {e}") from None


def from_livecodebench(record: dict[str, Any], index: int) -> Problem | None:
    public = _json_text(record.get("public_test_cases"), "public_test_cases") or []
    private = decode_lcb_private(record["private_test_cases"]) if record.get("private_test_cases") else []
    if any(t.get("testtype") == "functional" for t in public + private):
        return None
    pick = lambda tests: [{"input": t["input"], "output": t["output"]} for t in tests]  # noqa: E731
    return _finish(Problem(
        id=f"lcb-{record.get('question_id', index)}", title=record.get("question_title", ""),
        statement=record.get("question_content", ""), public_tests=pick(public),
        hidden_tests=pick(private), difficulty=record.get("difficulty", "unknown"),
        source=f"livecodebench/{record.get('platform', '')}"))


def _finish(problem: Problem) -> Problem | None:
    """Keep only hidden tests the agent has not been shown, and drop a problem left without
    one. A public example is shown with its output, so a program that replays the shown
    outputs passes it: judged on it (APPS rows with one test used to be judged on their only,
    public, test), a hard-coded table was paid as a solution. Only unseen tests verify one;
    and when every hidden test expects one shown output (the real TACO sample's tests are its
    example with the input shuffled), a program printing that output passes them all."""
    if not RULES.on("hidden_excludes_shown"):  # the former rule: judge the examples then
        problem.hidden_tests = problem.hidden_tests or list(problem.public_tests)
        return problem if problem.hidden_tests else None
    shown = {t["input"].strip() for t in problem.public_tests}
    problem.hidden_tests = [t for t in problem.hidden_tests if t["input"].strip() not in shown]
    outputs = {" ".join(t["output"].split()) for t in problem.hidden_tests}
    if len(outputs) == 1 and outputs <= {" ".join(t["output"].split())
                                         for t in problem.public_tests}:
        return None  # every hidden test expects a shown output: printing it passes them all
    return problem if problem.hidden_tests else None


FORMATS: dict[str, Callable[[dict[str, Any], int], Problem | None]] = {
    "envgym": lambda r, i: _finish(from_envgym(r)),
    "codecontests": from_codecontests,
    "apps": from_apps,
    "taco": from_taco,
    "livecodebench": from_livecodebench,
}


def parse_records(records: list[dict[str, Any]], dataset_format: str = "auto",
                  where: str = "dataset") -> list[Problem]:
    """Problems of every stdin/stdout record; raises if none is usable."""
    if not records:
        raise DatasetError(f"{where}: no records")
    fmt = detect_format(records[0]) if dataset_format in (None, "", "auto") else dataset_format
    if fmt not in FORMATS:
        raise DatasetError(f"unknown dataset_format `{fmt}`; use one of {sorted(FORMATS)} or auto")
    problems = []
    for i, record in enumerate(records):
        try:
            problem = FORMATS[fmt](record, i)
        except (KeyError, TypeError, ValueError, SyntaxError) as e:
            raise DatasetError(f"{where}: record {i} does not match format `{fmt}`: {e!r}") from None
        if problem is not None:
            problems.append(problem)
    if not problems:
        raise DatasetError(f"{where}: no stdin/stdout problem with a hidden test among "
                           f"{len(records)} records (call-based problems, and problems whose "
                           "only tests are the shown examples, are skipped)")
    return problems

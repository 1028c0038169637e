"""Loaders for the public formats: on our own fixtures (tests/fixtures), on files written
here, and on the real public samples when present (see tests/samples.py)."""

import base64
import json
import pickle
import zlib
from collections import OrderedDict

import pytest

from envgym.environments.code import CodeRefineEnv, load_problems
from envgym.environments.code.loaders import decode_lcb_private, parse_records
from envgym.environments.code.policies import OraclePolicy, program_turn
from envgym.errors import DatasetError
from tests.samples import OWN, needs_real, real

ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
LCB_COMPARE = ("for _ in range(int(input())):\n    a, b = map(int, input().split())\n"
               "    print('LESS' if a < b else 'EQUAL' if a == b else 'GREATER')\n")
ADD_CPP = "#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);}"


def _codecontests_rows():
    """Two problems in the Hugging Face CodeContests layout (parallel lists, enum languages)."""
    tests = lambda pairs: {"input": [f"{a} {b}\n" for a, b in pairs], "output": [f"{a + b}\n" for a, b in pairs]}  # noqa: E731
    return [
        {"name": "1_A. Sum", "description": "Print a+b.", "public_tests": tests([(1, 2)]),
         "private_tests": tests([(5, 7), (-3, 3)]), "generated_tests": tests([(10**12, 1)]),
         "source": 2, "difficulty": 7, "solutions": {"language": [1, 3], "solution": ["print 1", ADD]},
         "incorrect_solutions": {"language": [3], "solution": ["print(3)"]}, "cf_contest_id": 1,
         "cf_index": "A", "cf_points": 500.0, "cf_rating": 800, "cf_tags": ["math"],
         "is_description_translated": False, "untranslated_description": "",
         "time_limit": {"seconds": 1, "nanos": 500000000}, "memory_limit_bytes": 268435456,
         "input_file": "", "output_file": ""},
        {"name": "2_B. Sum again", "description": "Print a+b.", "public_tests": tests([(2, 2)]),
         "private_tests": {"input": [], "output": []}, "generated_tests": tests([(4, 4), (0, 0)]),
         "source": 2, "difficulty": 8, "solutions": {"language": [2], "solution": [ADD_CPP]},
         "incorrect_solutions": {"language": [], "solution": []}, "cf_rating": 0, "cf_tags": [],
         "time_limit": None, "memory_limit_bytes": 0},
    ]


def test_codecontests_rows_load_and_judge_with_their_own_solutions(tmp_path):
    path = tmp_path / "cc.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _codecontests_rows()))
    problems = load_problems(str(path), "codecontests")
    first, second = problems
    assert first.time_limit_s == 1.5 and first.memory_mb == 256 and first.difficulty == "800"
    assert len(first.hidden_tests) == 3 and first.solutions == {"python": [ADD]}  # Python 2 dropped
    assert first.wrong_solutions == {"python": ["print(3)"]} and second.solutions["cpp"] == [ADD_CPP]
    assert second.time_limit_s == 2.0 and len(second.hidden_tests) == 2
    env = CodeRefineEnv(dataset=str(path), dataset_format="auto")
    for seed in range(2):
        env.reset(seed=seed)
        *_, info = env.step(OraclePolicy(seed).act(env, []))
        assert info["outcome"]["success"], info["outcome"]
    env.close()


def test_own_apps_row():
    rows = [json.loads(line) for line in (OWN / "apps" / "train.jsonl").read_text().splitlines()]
    io = json.loads(rows[0]["input_output"])
    extra = {"inputs": io["inputs"] + ["1\n2\n"], "outputs": io["outputs"] + ["2 1 \n"]}
    (p,) = parse_records([{**rows[0], "input_output": json.dumps(extra)}], "auto")
    assert p.source == "apps" and p.id == "apps-0" and p.difficulty == "interview"
    assert p.public_tests[0] == {"input": "2\n3\n1\n", "output": "3 2 1 \n1 \n"}  # spaces kept
    assert p.hidden_tests == [{"input": "1\n2\n", "output": "2 1 \n"}]
    assert p.solutions["python"][0].startswith("for _ in range(int(input())):")


def test_a_row_whose_only_test_is_the_shown_example_is_refused():
    # issue 36: a one-test APPS row was judged on its public example, so a program replaying
    # the shown output was paid as a solution; nothing unseen verifies it, so it is dropped
    with pytest.raises(DatasetError, match="hidden test"):
        load_problems(str(OWN / "apps" / "train.jsonl"))


def test_a_row_whose_hidden_tests_all_expect_the_shown_output_is_refused():
    record = {"id": "p", "statement": "add", "public_tests": [{"input": "1 2\n", "output": "3\n"}],
              "hidden_tests": [{"input": "2 1\n", "output": "3\n"},
                               {"input": "0 3", "output": "3"}]}
    with pytest.raises(DatasetError, match="hidden test"):
        parse_records([record], "envgym")


def test_hidden_tests_equal_to_a_shown_example_are_not_judged():
    record = {"id": "p", "statement": "add", "public_tests": [{"input": "1 2\n", "output": "3\n"}],
              "hidden_tests": [{"input": "1 2", "output": "3"},
                               {"input": "2 2\n", "output": "4\n"}]}
    (p,) = parse_records([record], "envgym")
    assert p.hidden_tests == [{"input": "2 2\n", "output": "4\n"}]


def test_own_taco_row_limits_tags_and_split():
    (p,) = load_problems(str(OWN / "taco" / "rows.jsonl"))
    assert p.source == "taco" and p.time_limit_s == 2.0 and p.memory_mb == 128
    assert p.tags == ["Mathematics", "Implementation"]  # a Python-literal list, not JSON
    assert len(p.public_tests) == 1 and len(p.hidden_tests) == 3
    assert p.hidden_tests[-1]["output"] == "\n9\n"  # stray whitespace kept; the grader strips


def test_own_livecodebench_row_decodes_private_tests():
    path = OWN / "livecodebench" / "codeforces_own_A.jsonl"
    (p,) = load_problems(str(path))
    decoded = json.loads(path.with_name("codeforces_own_A.private_tests.decoded.json").read_text())
    assert json.loads(path.read_text())["private_test_cases"].startswith("eJ")  # zlib header
    assert p.hidden_tests == [{"input": t["input"], "output": t["output"]} for t in decoded]
    assert p.id == "lcb-9001_A" and p.difficulty == "easy" and len(p.public_tests) == 1


@pytest.mark.parametrize("path", ["taco/rows.jsonl",
                                  "livecodebench/codeforces_own_A.jsonl"])
def test_own_rows_judge_with_their_reference_solution_or_fail_with_a_wrong_one(path):
    """The fixtures are consistent: a real solution passes every hidden test, a wrong one not."""
    env = CodeRefineEnv(dataset=str(OWN / path), dataset_format="auto", skeptical=False)
    env.reset(seed=0)
    if "livecodebench" in path:  # LCB rows carry no solutions: use ours
        env.problem.solutions["python"] = [LCB_COMPARE]
    *_, info = env.step(OraclePolicy(0).act(env, []))
    assert info["outcome"]["success"], info["outcome"]
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(program_turn("python", "print('LESS')", submit=True))
    assert terminated and not info["outcome"]["success"], info
    env.close()


@needs_real
def test_real_apps_sample():
    rows = [json.loads(line) for line in
            real("apps", "train_row0_truncated.jsonl").read_text().splitlines() if line]
    (p,) = parse_records([{**rows[0], "input_output": json.dumps({
        "inputs": [*json.loads(rows[0]["input_output"])["inputs"], "0\n"],
        "outputs": [*json.loads(rows[0]["input_output"])["outputs"], "\n"]})}], "apps")
    assert p.source == "apps" and p.id == "apps-0" and p.difficulty == "interview"
    assert p.public_tests[0]["output"].startswith("1\n3 \n")  # trailing spaces kept
    assert p.hidden_tests == [{"input": "0\n", "output": "\n"}]  # its only test is shown
    assert p.solutions["python"][0].startswith("for _ in range(int(input())):")


@needs_real
def test_real_taco_sample():
    # issue 36: its other tests are the example with the input shuffled, all expecting the
    # shown output: a program printing it passed them all, so the row is refused
    with pytest.raises(DatasetError, match="hidden test"):
        load_problems(str(real("taco", "sample_rows.jsonl")))
    rows = [json.loads(line) for line in
            real("taco", "sample_rows.jsonl").read_text().splitlines() if line]
    io = json.loads(rows[0]["input_output"])
    io = {"inputs": [*io["inputs"], "1\n1\n1\n"], "outputs": [*io["outputs"], "1\n"]}
    (p,) = parse_records([{**rows[0], "input_output": json.dumps(io)}], "taco")
    assert p.source == "taco" and p.time_limit_s == 1.0 and p.memory_mb == 512
    assert p.tags == ["Data structures", "Mathematics", "Greedy algorithms"]
    # of its 3 other tests one repeats the shown example and is not judged
    assert len(p.public_tests) == 1 and len(p.hidden_tests) == 3


@needs_real
def test_real_livecodebench_sample_decodes_private_tests():
    (p,) = load_problems(str(real("livecodebench", "codeforces_1873_A.jsonl")))
    decoded = json.loads(real("livecodebench", "codeforces_1873_A.private_tests.decoded.json").read_text())
    assert p.hidden_tests == [{"input": t["input"], "output": t["output"]} for t in decoded]
    assert p.id == "lcb-1873_A" and p.difficulty == "easy" and len(p.public_tests) == 1


def test_lcb_decoder_refuses_pickled_objects():
    blob = base64.b64encode(zlib.compress(pickle.dumps(OrderedDict(a=1)))).decode()
    with pytest.raises(DatasetError, match="refusing"):
        decode_lcb_private(blob)
    text = json.dumps([{"input": "1\n", "output": "2\n", "testtype": "stdin"}])
    assert decode_lcb_private(text)[0]["output"] == "2\n"
    assert decode_lcb_private(base64.b64encode(zlib.compress(pickle.dumps(text))).decode())[0]["input"] == "1\n"


def test_call_based_problems_are_skipped_and_bad_input_explained():
    functional = {"question_content": "x", "public_test_cases": json.dumps(
        [{"input": "[1]", "output": "1", "testtype": "functional"}]), "private_test_cases": "[]"}
    with pytest.raises(DatasetError, match="no stdin/stdout problem"):
        parse_records([functional])
    with pytest.raises(DatasetError, match="cannot tell"):
        parse_records([{"foo": 1}])
    with pytest.raises(DatasetError, match="unknown dataset_format"):
        parse_records([{"foo": 1}], "leetcode")
    with pytest.raises(DatasetError):
        load_problems("/nonexistent/file.jsonl")

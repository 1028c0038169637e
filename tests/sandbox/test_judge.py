"""`judge` and `judge_many`: verdict per test, compile once, checkers, the bounded pool."""

import threading

import pytest

from envgym.sandbox import CheckerProgram, Limits, Verdict, judge, judge_many
from envgym.sandbox.backends.base import Backend

ADD_PY = "a, b = map(int, input().split())\nprint(a + b)"
ADD_CPP = "#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);}"
TESTS = [{"input": "1 2", "output": "3"}, {"input": "40 2\n", "output": "42\n"}]


@pytest.mark.parametrize("source,lang", [(ADD_PY, "python"), (ADD_CPP, "cpp")])
def test_correct_solution_is_ac(bwrap, source, lang):
    j = judge(source, lang, TESTS, backend=bwrap)
    assert (j.verdict, j.passed, j.total) == (Verdict.AC, 2, 2) and j.accepted


def test_wrong_solution_is_wa_on_the_failing_test(bwrap):
    j = judge("a, b = map(int, input().split())\nprint(a + b + (a == 40))", "python", TESTS,
              backend=bwrap)
    assert j.verdict is Verdict.WA and [t.verdict for t in j.tests] == [Verdict.AC, Verdict.WA]


def test_stop_on_first_failure_skips_the_rest(bwrap):
    j = judge("print(0)", "python", TESTS, backend=bwrap, stop_on_first_failure=True)
    assert j.verdict is Verdict.WA and len(j.tests) == 1 and j.total == 2


def test_cpp_is_compiled_once_per_judgement(bwrap, monkeypatch):
    calls = []
    original = Backend._compile_cpp
    monkeypatch.setattr(Backend, "_compile_cpp",
                        lambda self, *a: calls.append(1) or original(self, *a))
    j = judge(ADD_CPP, "cpp", TESTS * 3, backend=bwrap)
    assert j.verdict is Verdict.AC and j.passed == 6 and calls == [1]


def test_non_compiling_cpp_is_ce_without_running_tests(bwrap):
    j = judge("int main( {", "cpp", TESTS, backend=bwrap)
    assert j.verdict is Verdict.CE and j.tests == [] and "error" in j.compile_output


def test_float_tolerance(bwrap):
    src = "print(1/3)"
    tests = [{"input": "", "output": "0.333333"}]
    assert judge(src, "python", tests, backend=bwrap).verdict is Verdict.WA
    assert judge(src, "python", tests, backend=bwrap, float_tol=1e-6).verdict is Verdict.AC


def test_python_checker_accepts_any_valid_answer(bwrap):
    def checker(inp, expected, actual):
        n = int(inp)
        a, b = map(int, actual.split())
        return (a + b == n, "sum differs")

    tests = [{"input": "10", "output": "5 5"}]
    assert judge("print(3, 7)", "python", tests, checker=checker,
                 backend=bwrap).verdict is Verdict.AC
    bad = judge("print(3, 8)", "python", tests, checker=checker, backend=bwrap)
    assert bad.verdict is Verdict.WA and "sum differs" in bad.tests[0].message


def test_checker_program_gets_input_output_answer(bwrap):
    checker = CheckerProgram(
        "import sys\ninp, out, ans = (open(p).read().split() for p in sys.argv[1:4])\n"
        "sys.exit(0 if sorted(out) == sorted(ans) else 1)", "python")
    tests = [{"input": "", "output": "1 2 3"}]
    assert judge("print(3, 1, 2)", "python", tests, checker=checker,
                 backend=bwrap).verdict is Verdict.AC
    assert judge("print(3, 1, 1)", "python", tests, checker=checker,
                 backend=bwrap).verdict is Verdict.WA


def test_raising_checker_is_se_not_wa(bwrap):
    j = judge("print(1)", "python", [{"input": "", "output": "1"}], backend=bwrap,
              checker=lambda *a: 1 / 0)
    assert j.verdict is Verdict.SE


def test_judge_many_keeps_order_and_bounds_concurrency(bwrap, monkeypatch):
    running, peak, lock = [0], [0], threading.Lock()
    original = Backend.execute

    def counted(self, *a, **k):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            return original(self, *a, **k)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(Backend, "execute", counted)
    subs = [{"source": f"print({i})", "language": "python",
             "tests": [{"input": "", "output": str(i if i % 3 else -1)}]} for i in range(8)]
    out = judge_many(iter(subs), workers=2, backend=bwrap, limits=Limits(time_s=5))
    assert [j.verdict for j in out] == [Verdict.WA if i % 3 == 0 else Verdict.AC
                                        for i in range(8)]
    assert peak[0] <= 2

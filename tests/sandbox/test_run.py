"""`run`: correct programs, the verdict for each way a program can fail, on both backends."""

import pytest

from envgym.sandbox import Limits, Verdict, run

FAST = Limits(time_s=1.0, memory_mb=256)
ROOMY = Limits(time_s=5.0, memory_mb=256)

CPP_SUM = """#include <iostream>
int main(){ long long a, b; std::cin >> a >> b; std::cout << a + b << "\\n"; }"""


def test_python_reads_stdin_and_prints(backend):
    ex = run("print(input()[::-1])", "python", stdin="abc\n", backend=backend)
    assert (ex.verdict, ex.stdout, ex.exit_code, ex.backend) == (
        Verdict.AC, "cba\n", 0, backend.name)
    assert ex.memory_kb > 0 and ex.wall_time > 0


def test_cpp_compiles_and_runs(backend):
    ex = run(CPP_SUM, "cpp", stdin="2 40", backend=backend)
    assert ex.verdict is Verdict.AC and ex.stdout.strip() == "42"


def test_cpp_that_does_not_compile_is_ce(backend):
    ex = run("int main() { return x; }", "cpp", backend=backend)
    assert ex.verdict is Verdict.CE and "x" in ex.stderr


def test_python_syntax_error_is_ce_but_runtime_eval_error_is_re(backend):
    assert run("print('x'", "python", backend=backend).verdict is Verdict.CE
    assert run("eval('(')", "python", backend=backend).verdict is Verdict.RE


def test_crash_is_re_with_exit_code(backend):
    ex = run("import sys\nsys.exit(3)", "python", backend=backend)
    assert ex.verdict is Verdict.RE and ex.exit_code == 3


def test_segfault_is_re_with_signal(backend):
    ex = run("int main(){ volatile int *p = 0; *p = 1; }", "cpp", backend=backend)
    assert ex.verdict is Verdict.RE and ex.signal == 11 and ex.exit_code is None


def test_slow_program_is_tle_and_killed_on_time(backend):
    ex = run("while True: pass", "python", limits=FAST, backend=backend)
    assert ex.verdict is Verdict.TLE and ex.wall_time < FAST.time_s + 1.0


def test_sleeping_program_is_tle_by_wall_clock(backend):
    ex = run("import time\ntime.sleep(30)", "python", limits=FAST, backend=backend)
    assert ex.verdict is Verdict.TLE and ex.wall_time < FAST.time_s + 1.0


def test_cpp_allocation_past_the_limit_is_mle(backend):
    src = "#include <vector>\nint main(){ std::vector<char> v(1ull<<30, 1); return v[7]; }"
    assert run(src, "cpp", limits=FAST, backend=backend).verdict is Verdict.MLE


def test_stderr_is_captured_separately(backend):
    ex = run("import sys\nprint('out')\nprint('err', file=sys.stderr)", "python",
             backend=backend)
    assert ex.stdout == "out\n" and ex.stderr == "err\n"


def test_environment_is_scrubbed(backend, monkeypatch):
    monkeypatch.setenv("ENVGYM_HOST_ONLY", "leak")
    ex = run("import os\nprint(sorted(os.environ))", "python", backend=backend)
    assert "ENVGYM_HOST_ONLY" not in ex.stdout and "OPENBLAS_NUM_THREADS" in ex.stdout


def test_unknown_language_is_rejected():
    from envgym.errors import InvalidConfig

    with pytest.raises(InvalidConfig):
        run("x", "cobol")


def test_limits_must_be_positive():
    from envgym.errors import InvalidConfig

    with pytest.raises(InvalidConfig):
        Limits(time_s=0)

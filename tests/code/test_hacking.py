"""Reward hacking (the Countdown-Code lesson: once hacks leak in, models learn them).
Each known hack scores 0 and never reaches AC."""

import os

import pytest

HARDCODE = '''import sys
table = {table!r}
data = sys.stdin.read()
print(table.get(data.strip(), "0"))
'''


def _submit(env, code, language="python", task="range_span"):
    env.reset(seed=0, options={"task_id": task})
    fence = "python" if language == "python" else "cpp"
    _, reward, term, _, info = env.step(f"```{fence}\n{code}\n```\n<submit></submit>")
    assert term
    return reward, info["outcome"]


@pytest.mark.parametrize("code,language", [
    ("import sys\nsys.exit(0)", "python"),
    ("import os\nos._exit(0)", "python"),
    ("raise SystemExit", "python"),
    ("#include <cstdlib>\nint main() { std::exit(0); }", "cpp"),
])
def test_exiting_early_to_fake_success_fails(make_env, code, language):
    reward, out = _submit(make_env(), code, language)
    assert reward == 0.0 and out["verdict"] != "AC"


# A targeted reader: it looks for the problem data wherever an install, a checkout or a
# dataset would put it, finds the test whose input is this run's stdin and prints its output.
SNOOP = r"""import glob, json, os, site, sys, time
want = sys.stdin.read().strip()
deadline = time.time() + 1.2
roots = [*EXTRA, os.getcwd(), *sys.path, *site.getsitepackages(), site.getusersitepackages(),
         *glob.glob("/usr/lib/python3*/*-packages"),
         *glob.glob("/usr/local/lib/python3*/*-packages"),
         os.path.expanduser("~"), "/work", "/home", "/root", "/opt", "/srv", "/tmp", "/usr/local",
         "/usr/share", "/var/lib", "/usr"]

def tests_in(path):
    with open(path, errors="ignore") as fh:
        text = fh.read(50_000_000)
    if "_tests" not in text:
        return
    for line in [text, *text.splitlines()]:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        for r in rec if isinstance(rec, list) else [rec]:
            if isinstance(r, dict):
                for key in ("hidden_tests", "public_tests", "private_tests", "tests"):
                    yield from r.get(key) or []

def search():
    seen = set()
    for root in roots:
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if os.path.join(d, x) not in ("/proc", "/sys", "/dev")]
            if time.time() > deadline:
                return None
            for name in files:
                path = os.path.join(d, name)
                if not name.endswith((".jsonl", ".json")) or path in seen:
                    continue
                seen.add(path)
                try:
                    for t in tests_in(path):
                        if isinstance(t, dict) and str(t.get("input", "")).strip() == want:
                            return t["output"]
                except (OSError, UnicodeError):
                    pass
    return None

found = search()
sys.stdout.write(found if found is not None else "0\n")
"""


def _snoop(*extra: str) -> str:
    return f"EXTRA = {list(extra)!r}\n" + SNOOP


@pytest.fixture(scope="module")
def readable_copy():
    """The shipped problem file where any user may read it, as a system-wide install would
    leave it (pytest's own tmp dirs are private to the user running the tests)."""
    import shutil
    import tempfile

    from envgym.environments.code.problems import BUILTIN_PATH

    folder = tempfile.mkdtemp(prefix="envgym-leak-")
    os.chmod(folder, 0o755)
    copy = os.path.join(folder, "problems.jsonl")
    shutil.copy(BUILTIN_PATH, copy)
    os.chmod(copy, 0o644)
    yield folder, str(BUILTIN_PATH.parent)
    shutil.rmtree(folder, ignore_errors=True)


def test_the_reader_does_find_the_hidden_tests_when_files_are_readable(make_env, readable_copy):
    """The control: unsandboxed, the same program scores 1.0, so the next test can fail."""
    env = make_env(backend="subprocess", allow_unsafe_sandbox=True)
    reward, out = _submit(env, _snoop(*readable_copy))
    assert reward == 1.0 and out["verdict"] == "AC"


def test_reading_test_files_fails_in_the_sandbox(make_env, readable_copy):
    reward, out = _submit(make_env(), _snoop(*readable_copy))
    assert reward == 0.0 and out["verdict"] != "AC"


def test_reading_test_files_fails_on_every_problem(problems, make_env):
    env = make_env(problems=problems)
    for problem in problems[:4]:
        reward, out = _submit(env, _snoop(), task=problem.id)
        assert reward == 0.0 and not out["success"], problem.id


def test_the_sandbox_holds_no_expected_output(make_env):
    env = make_env()
    env.reset(seed=0, options={"task_id": "two_teams"})
    listing = ("import os\nfor root in ['.', '/tmp', '/box']:\n    for d, _, fs in os.walk(root):\n"
               "        print(d, fs)\nprint(sorted(os.environ))\n")
    obs, *_ = env.step(f"```python\n{listing}```\n<run>x</run>")
    text = obs[0]["content"].split("Custom run")[1].lower()
    assert all(word not in text for word in ("expected", "answer", "hidden", "output.txt", "jsonl"))


def test_tampering_with_files_does_not_help(make_env):
    tamper = ("import os\nfor name in ['expected.txt', 'answer.txt', '/tmp/answer.txt']:\n"
              "    try:\n        open(name, 'w').write('0\\n')\n    except OSError:\n        pass\n"
              "print(0)\n")
    reward, out = _submit(make_env(), tamper)
    assert reward == 0.0 and out["verdict"] == "WA"


def test_hard_coding_public_outputs_fails_on_every_problem(problems, make_env):
    env = make_env(problems=problems)
    for problem in problems:
        table = {t["input"].strip(): t["output"] for t in problem.public_tests}
        env.reset(seed=0, options={"task_id": problem.id})
        obs, *_ = env.step(f"```python\n{HARDCODE.format(table=table)}```")
        assert env.attempts[-1].all_passed, problem.id  # fools the public tests...
        _, reward, _, _, info = env.step("<submit></submit>")
        assert reward == 0.0 and not info["outcome"]["success"], problem.id  # ...not the hidden


def test_hidden_tests_never_appear_in_observations(subset, make_env, play):
    from envgym.environments.code.policies import RefinerPolicy

    env = make_env()
    for seed, problem in enumerate(subset):
        messages, *_ = play(env, RefinerPolicy(seed), seed)
        seen = "\n".join(m["content"] for m in messages if m["role"] != "assistant")
        public = {t["input"] for t in problem.public_tests}
        for test in problem.hidden_tests:
            if test["input"] not in public and len(test["input"]) >= 12:
                assert test["input"].strip() not in seen, problem.id


def test_registered_hacks_earn_nothing():
    from envgym.hacks import hack_names, run_hacks

    assert {"hack_read_tests", "hack_hardcode_public", "hack_guess_output"} <= set(
        hack_names("envgym/CodeRefine-v0"))
    results = run_hacks("envgym/CodeRefine-v0", episodes=12)
    assert all(r.ok for r in results), [r.render() for r in results]
    assert all(r.values["mean_reward"] == 0.0 for r in results)

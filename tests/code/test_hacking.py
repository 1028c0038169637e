"""Reward hacking (the Countdown-Code lesson: once hacks leak in, models learn them).
Each known hack scores 0 and never reaches AC."""

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


SNOOP = r'''import os, sys
found = []
for root in [".", "/tmp", "/box", "/dev/shm", os.path.expanduser("~"), "/work"]:
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            try:
                found.append(open(path, errors="ignore").read())
            except OSError:
                pass
for path in ["/work/main/environments/code/data/problems.jsonl", "expected.txt", "answer.txt"]:
    try:
        found.append(open(path).read())
    except OSError:
        pass
print(found[-1] if found else "")
'''


def test_reading_test_files_fails(make_env):
    reward, out = _submit(make_env(), SNOOP)
    assert reward == 0.0 and out["verdict"] != "AC"


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

"""The README's registration example runs as written and passes the checker."""

import re
from pathlib import Path

import envgym
from envgym.checker import check

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_registration_example_works():
    block = re.search(r"## Register an environment.*?```python\n(.*?)```", README.read_text(), re.S)[1]
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    env = envgym.make("me/Echo-v0")
    obs, info = env.reset(seed=1)
    assert "beta" in obs[0]["content"]
    *_, reward, term, _, info = env.step("<answer>beta</answer>")
    assert term and reward == 1.0 and info["outcome"]["success"]
    assert check("me/Echo-v0").ok


def test_ci_runs_the_readme_set_up_commands_verbatim():
    """`.ci/run` extracts the Quick start's commands from README.md (so they cannot drift)
    and runs each of them in a fresh clone; the extraction must yield the README's lines."""
    import subprocess

    ci = README.parent / ".ci" / "run"
    func = re.search(r"^readme_commands\(\) \{.*?^\}", ci.read_text(), re.S | re.M)[0]
    got = subprocess.run(["bash", "-c", f"{func}\nreadme_commands"], cwd=README.parent,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    quick = README.read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in quick.splitlines() if ln.startswith("python3 -m venv .venv")]
    assert got == lines and len(got) == 2
    assert got[0].endswith("envgym demo --out demo_out")
    assert got[1].endswith("python -m pytest -q")
    assert 'bash -c "$cmd"' in ci.read_text() and "git clone" in ci.read_text()

"""`.ci/run` fails unless it runs exactly the README's two Quick start commands (issue 35)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / ".ci" / "run"
GOOD = (ROOT / "README.md").read_text()
DEMO, TESTS = GOOD.split("## Quick start", 1)[1].split("```bash\n")[1:3]
DEMO, TESTS = DEMO.split("\n```")[0], TESTS.split("\n```")[0]


def _extraction() -> str:
    """The part of `.ci/run` that turns README.md into the command list, as CI runs it."""
    text = CI.read_text()
    part = re.search(r"# ci:readme-begin[^\n]*\n(.*?)# ci:readme-end", text, re.S)
    assert part, ".ci/run lost its marked README extraction"
    return "set -euo pipefail\n" + part[1] + 'printf "%s\\n" "${README_CMDS[@]}"\n'


def _run(tmp_path: Path, readme: str) -> subprocess.CompletedProcess:
    (tmp_path / ".ci").mkdir(exist_ok=True)
    shutil.copy(ROOT / ".ci" / "readme_commands.py", tmp_path / ".ci")
    (tmp_path / "README.md").write_text(readme)
    return subprocess.run(["bash", "-c", _extraction()], cwd=tmp_path,
                          capture_output=True, text=True)


def test_the_real_readme_gives_its_two_commands(tmp_path):
    got = _run(tmp_path, GOOD)
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines() == [DEMO, TESTS]


@pytest.mark.parametrize("broken", [
    GOOD.replace("## Quick start", "## Getting started"),                   # renamed heading
    GOOD.replace(f"```bash\n{TESTS}\n```", f"```bash\n{TESTS}\n```\n\n```bash\nls\n```"),
    GOOD.replace(TESTS, TESTS.replace(" && python -m", " && \\\n  python -m")),  # wrapped
    GOOD.replace(f"```bash\n{TESTS}\n```", "no test command"),               # one block
])
def test_a_broken_quick_start_fails_ci(tmp_path, broken):
    assert broken != GOOD
    got = _run(tmp_path, broken)
    assert got.returncode != 0
    assert "Quick start" in got.stderr or "command" in got.stderr


def test_the_loop_counts_the_commands_it_ran():
    text = CI.read_text()
    assert "< <(readme_commands)" not in text
    assert re.search(r'if \[ "\$ran" -ne 2 \]', text)

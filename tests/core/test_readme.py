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

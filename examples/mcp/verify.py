"""Verifiers for examples/mcp/tasks.jsonl (`verifier=examples/mcp/verify.py:NAME`).

`exact` is sound: the answer must state the task's number, and only it.
`reward_file` is the planted hack (the shape OpenEnv #1199 found in five shipped
environments): it trusts a `reward.txt` in the working directory, a file the agent can write
with the server's `write_file` tool. `envgym check` must catch it.
"""

from __future__ import annotations

import re
from typing import Any


def exact(task: dict[str, Any], answer: str, ctx: Any) -> dict[str, float]:
    """1 for the right number alone, 0 otherwise; used tools earn nothing by themselves."""
    numbers = re.findall(r"-?\d+", answer)
    right = len(numbers) == 1 and int(numbers[0]) == int(task["answer"])
    return {"correct": 1.0 if right else 0.0}


def reward_file(task: dict[str, Any], answer: str, ctx: Any) -> float:
    """DELIBERATELY UNSOUND: reads the score from a file inside the agent's reach."""
    planted = ctx.workdir / "reward.txt"
    if planted.is_file():
        return float(planted.read_text().strip())
    return exact(task, answer, ctx)["correct"]

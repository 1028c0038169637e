"""`mcp:CMD_OR_URL`: an MCP tool server as the tool set of a task environment.

The server gives tools; the user gives the tasks (a JSONL file, one object per line with a
`prompt` and any fields the verifier reads) and the verifier (`verifier="module:function"`
or `"path/to/file.py:function"`). Each turn the model either calls tools
(`<tool_call>{"name", "arguments"}</tool_call>`, executed over MCP, results returned as
`tool` messages) or answers in plain text, which ends the episode and is scored:

    verifier(task: dict, answer: str, ctx: VerifierContext) -> float | dict[str, float]

A dict names the reward components (they sum to the reward). `ctx` holds the episode's
working directory (the stdio server's cwd, emptied at every reset), the transcript and the
tool calls made; `ctx.call_tool` reaches the server. Whatever the verifier returns is
checked (`reward_range`, default [0, 1]): NaN, inf or out-of-range fails the episode.
A verifier that raises or runs past `timeout` fails it too; a server that dies, hangs or
breaks the protocol likewise (`ImportedEnvError`).

Turn-level signal: a malformed tool call costs the format penalty at its turn.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envgym.integrations.imported import (
    ImportedEnvError,
    call_with_timeout,
    checked_reward,
    credit_support,
    parse_calls,
    render_tool_prompt,
)
from envgym.integrations.imported import (
    reward_range as parse_range,
)

from envgym.core import StepResult, TextEnv, state_digest, system, user
from envgym.errors import InvalidConfig
from envgym.tools import ToolCallError

__all__ = ["McpTaskEnv", "VerifierContext", "load_callable", "load_tasks"]

ANSWER_HINT = "When you are done, reply with your final answer as plain text (no tool call)."


@dataclass
class VerifierContext:
    """What a verifier may read about the episode it scores."""

    workdir: Path
    transcript: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    call_tool: Callable[[str, dict[str, Any]], tuple[str, bool]] | None = None


def load_tasks(path: str | Path) -> list[dict[str, Any]]:
    """Tasks from JSONL: each line an object with a string `prompt`."""
    path = Path(path)
    if not path.is_file():
        raise InvalidConfig(f"mcp: tasks file {str(path)!r} not found (tasks=FILE.jsonl)")
    tasks = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InvalidConfig(f"{path}:{n}: not JSON ({e.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
            raise InvalidConfig(f"{path}:{n}: each task needs a string `prompt`")
        tasks.append(row)
    if not tasks:
        raise InvalidConfig(f"mcp: tasks file {path} has no tasks")
    return tasks


def load_callable(ref: str | Callable[..., Any], what: str = "verifier") -> Callable[..., Any]:
    """`module:function`, `path/to/file.py:function`, or a callable."""
    if callable(ref):
        return ref
    if not isinstance(ref, str) or ":" not in ref:
        raise InvalidConfig(f"{what} must be 'module:function' or 'file.py:function', got {ref!r}")
    where, _, name = ref.rpartition(":")
    try:
        if where.endswith(".py"):
            file = Path(where).resolve()
            spec = importlib.util.spec_from_file_location(f"envgym_user_{file.stem}", file)
            if spec is None or spec.loader is None or not file.is_file():
                raise FileNotFoundError(str(file))
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
        fn = getattr(module, name)
    except (ImportError, AttributeError, FileNotFoundError, OSError) as e:
        raise InvalidConfig(f"cannot load {what} {ref!r}: {e}") from None
    if not callable(fn):
        raise InvalidConfig(f"{what} {ref!r} is not callable")
    return fn


class McpTaskEnv(TextEnv):
    """Tasks from JSONL, tools from an MCP server, reward from a user's verifier."""

    def __init__(self, server: str, tasks: str | Path | None = None,
                 verifier: str | Callable[..., Any] | None = None, *,
                 reward_range: Any = (0.0, 1.0), success_at: float | None = None,
                 timeout: float = 30.0, max_turns: int = 8, max_invalid_actions: int = 3,
                 system_prompt: str = "", max_action_chars: int = 100_000):
        super().__init__(max_turns=max_turns, max_invalid_actions=max_invalid_actions,
                         max_action_chars=max_action_chars)
        if tasks is None or verifier is None:
            raise InvalidConfig("mcp:CMD_OR_URL needs tasks=FILE.jsonl and "
                                "verifier=module:function (e.g. --env-arg tasks=tasks.jsonl "
                                "--env-arg verifier=check.py:score)")
        from envgym.integrations.mcp.connection import require_mcp

        require_mcp()
        self.server, self.tasks_path, self.verifier_ref = server, str(tasks), verifier
        self.tasks = load_tasks(tasks)
        self.verifier = load_callable(verifier)
        self.bounds = parse_range(reward_range)
        self.success_at = self.bounds[1] if success_at is None else float(success_at)
        self.timeout, self.system_prompt = float(timeout), system_prompt
        self.workdir = Path(tempfile.mkdtemp(prefix="envgym-mcp-"))
        self._conn: Any = None
        self._connect()
        self._task: dict[str, Any] = {}
        self._calls: list[dict[str, Any]] = []
        self._results: list[str] = []
        self._actions: list[str] = []
        self._seed: int | None = None

    @classmethod
    def credit_support(cls, kwargs: dict[str, Any]) -> dict[str, str | None]:
        return credit_support({"outcome", "turn_rewards", "state_key"}, "an mcp: environment")

    def tool_schemas(self) -> list[dict[str, Any]]:
        from envgym.integrations.mcp.connection import tool_schema

        return [tool_schema(t) for t in self._conn.tools] if self._conn else []

    # ---- TextEnv ----------------------------------------------------------------------------

    def _reset(self, seed: int, options: dict[str, Any]) -> tuple[list[dict], dict[str, Any]]:
        if self._conn is None:
            self._connect()
        _empty(self.workdir)
        index = seed % len(self.tasks)
        self._task, self._seed = self.tasks[index], seed
        self._calls, self._results, self._actions = [], [], []
        self.task_id = str(self._task.get("id", f"{Path(self.tasks_path).stem}/{index}"))
        head = "\n\n".join(p for p in (self.system_prompt,
                                        render_tool_prompt(self.tool_schemas(), ANSWER_HINT)) if p)
        return [system(head), user(self._task["prompt"])], {}

    def _step(self, action: str) -> StepResult:
        self._actions.append(action)
        try:
            calls = parse_calls(action, [t.name for t in self._conn.tools])
        except ToolCallError as e:
            return self.invalid(str(e))
        if not calls:
            return self._score(action)
        observation = []
        for call in calls:
            text, is_error = self._call(call["name"], call["arguments"])
            self._calls.append({**call, "is_error": is_error})
            self._results.append(text)
            observation.append({"role": "tool", "name": call["name"],
                                "content": ("Error: " if is_error else "") + text})
        return StepResult(observation, {}, info={"tool_calls": calls})

    def _score(self, answer: str) -> StepResult:
        transcript = [*self._transcript, {"role": "assistant", "content": answer}]
        ctx = VerifierContext(self.workdir, transcript, list(self._calls), self._call)
        got = call_with_timeout(lambda: self.verifier(dict(self._task), answer, ctx), self.timeout,
                                f"verifier {self.verifier_ref!r}")
        source = f"verifier {self.verifier_ref!r}"
        if isinstance(got, dict):
            parts = {str(k): _finite(v, source, str(k)) for k, v in got.items()}
            total = checked_reward(sum(parts.values()), self.bounds, source)
        else:
            total = checked_reward(got, self.bounds, source)
            parts = {"verifier": total}
        outcome = {"success": total >= self.success_at - 1e-9, "score": total}
        return StepResult([], parts, terminated=True, info={"outcome": outcome})

    def _call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        try:
            return self._conn.call_tool(name, arguments)
        except ImportedEnvError:
            self._drop()  # a hung or dead server is not reused by the next episode
            raise

    def _state(self) -> Any:
        return {"task": self.task_id, "turn": self.turn, "results": state_digest(self._results)}

    def fork(self) -> McpTaskEnv:
        """A new server session replaying this episode (a tool server's state cannot be copied)."""
        if self._seed is None:
            raise ImportedEnvError("fork() before reset: there is no episode to replay")
        twin = McpTaskEnv(self.server, self.tasks_path, self.verifier, reward_range=self.bounds,
                          success_at=self.success_at, timeout=self.timeout,
                          max_turns=self.max_turns, max_invalid_actions=self.max_invalid_actions,
                          system_prompt=self.system_prompt, max_action_chars=self.max_action_chars)
        twin.spec_id = getattr(self, "spec_id", None)
        twin.reset(seed=self._seed)
        for action in list(self._actions):
            twin.step(action)
        return twin

    def _close(self) -> None:
        self._drop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    # ---- the server -------------------------------------------------------------------------

    def _connect(self) -> None:
        from envgym.integrations.mcp.connection import McpConnection, require_mcp

        require_mcp()

        self._conn = McpConnection(self.server, cwd=self.workdir, timeout=self.timeout,
                                   env={"ENVGYM_WORKDIR": str(self.workdir)})

    def _drop(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()


def _finite(value: Any, source: str, name: str) -> float:
    """A reward component: any finite number (the range bounds their sum)."""
    return checked_reward(value, (-float("inf"), float("inf")), source, f"component {name!r}")


def _empty(folder: Path) -> None:
    """Remove everything inside `folder` (the episode's working directory)."""
    folder.mkdir(parents=True, exist_ok=True)
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)

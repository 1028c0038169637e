"""`nemo:URL`: a running NeMo Gym resources server as a `TextEnv`.

A resources server speaks plain HTTP (NeMo Gym's `SimpleResourcesServer`):

* `POST /seed_session` with the task row starts a session, kept by the server's cookie;
* each tool is a `POST /<tool>` route taking the call's JSON arguments;
* `POST /verify` with `{"responses_create_params", "response"}` (the request the model saw
  and the Responses-API output it produced) answers `{"reward", "reward_components"?}`.

The tasks are NeMo Gym's own rollout-input JSONL (`tasks=FILE`): each row carries
`responses_create_params` (`input` messages and function `tools`) plus whatever fields its
verifier reads. The model calls tools with `<tool_call>{"name", "arguments"}</tool_call>`;
a turn without a call is the final answer and is verified. The reward is checked
(`reward_range`, default [0, 1]); `reward_components` become envgym's components when they
sum to the reward, otherwise they are reported in the outcome and the reward is one
component `reward`. An HTTP error, a timeout, a reply that is not the protocol's JSON, or a
refused reward raises `ImportedEnvError`: the episode fails, loudly.

Turn-level signal: a malformed tool call costs the format penalty at its turn.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

from envgym.integrations.imported import (
    ImportedEnvError,
    checked_reward,
    credit_support,
    parse_calls,
    render_tool_prompt,
)
from envgym.integrations.imported import reward_range as parse_range

from envgym.core import StepResult, TextEnv, state_digest, system
from envgym.errors import InvalidConfig
from envgym.tools import ToolCallError

__all__ = ["NemoEnv", "load_rows"]

ANSWER_HINT = "When you are done, reply with your final answer as plain text (no tool call)."


def load_rows(path: str | Path) -> list[dict[str, Any]]:
    """NeMo Gym rollout-input rows, each with `responses_create_params.input`."""
    path = Path(path)
    if not path.is_file():
        raise InvalidConfig(f"nemo: tasks file {str(path)!r} not found (tasks=FILE.jsonl)")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InvalidConfig(f"{path}:{n}: not JSON ({e.msg})") from None
        params = row.get("responses_create_params") if isinstance(row, dict) else None
        if not isinstance(params, dict) or not isinstance(params.get("input"), (list, str)):
            raise InvalidConfig(f"{path}:{n}: a row needs responses_create_params.input")
        rows.append(row)
    if not rows:
        raise InvalidConfig(f"nemo: tasks file {path} has no rows")
    return rows


class NemoEnv(TextEnv):
    """One session at a time on a NeMo Gym resources server (see the module docstring)."""

    def __init__(self, url: str, tasks: str | Path | None = None, *,
                 reward_range: Any = (0.0, 1.0), success_at: float | None = None,
                 timeout: float = 30.0, max_turns: int = 8, max_invalid_actions: int = 3,
                 max_action_chars: int = 100_000):
        super().__init__(max_turns=max_turns, max_invalid_actions=max_invalid_actions,
                         max_action_chars=max_action_chars)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise InvalidConfig(f"nemo: the server must be an http(s) URL, got {url!r}")
        if tasks is None:
            raise InvalidConfig("nemo:URL needs tasks=FILE.jsonl (NeMo Gym rollout-input rows)")
        import httpx

        self.url, self.tasks_path = url.rstrip("/"), str(tasks)
        self.rows = load_rows(tasks)
        self.bounds = parse_range(reward_range)
        self.success_at = self.bounds[1] if success_at is None else float(success_at)
        self.timeout = float(timeout)
        self._http = httpx.Client(base_url=self.url, timeout=self.timeout)
        self._row: dict[str, Any] = {}
        self._output: list[dict[str, Any]] = []
        self._actions: list[str] = []
        self._seed: int | None = None

    @classmethod
    def credit_support(cls, kwargs: dict[str, Any]) -> dict[str, str | None]:
        return credit_support({"outcome", "turn_rewards", "state_key"}, "a nemo: environment")

    def tool_schemas(self) -> list[dict[str, Any]]:
        tools = (self._row or self.rows[0])["responses_create_params"].get("tools") or []
        return [{"type": "function", "function": {
            "name": t["name"], "description": t.get("description", ""),
            "parameters": t.get("parameters") or {"type": "object", "properties": {}}}}
            for t in tools if t.get("type", "function") == "function" and "name" in t]

    # ---- TextEnv ----------------------------------------------------------------------------

    def _reset(self, seed: int, options: dict[str, Any]) -> tuple[list[dict], dict[str, Any]]:
        index = seed % len(self.rows)
        self._row, self._seed, self._output, self._actions = self.rows[index], seed, [], []
        self.task_id = str(self._row.get("id", f"{Path(self.tasks_path).stem}/{index}"))
        self._http.cookies.clear()  # a new server session per episode
        seed_body = {k: v for k, v in self._row.items() if k != "responses_create_params"}
        self._post("seed_session", seed_body)
        messages = _messages(self._row["responses_create_params"]["input"])
        hint = render_tool_prompt(self.tool_schemas(), ANSWER_HINT)
        if messages and messages[0]["role"] == "system":
            messages[0] = system(messages[0]["content"] + "\n\n" + hint)
        else:
            messages.insert(0, system(hint))
        return messages, {}

    def _step(self, action: str) -> StepResult:
        self._actions.append(action)
        try:
            calls = parse_calls(action, [t["function"]["name"] for t in self.tool_schemas()])
        except ToolCallError as e:
            return self.invalid(str(e))
        if not calls:
            return self._verify(action)
        observation = []
        for call in calls:
            result = self._post(call["name"], call["arguments"], tool=True)
            text = result if isinstance(result, str) else json.dumps(result)
            call_id = f"call_{uuid.uuid4().hex[:12]}"
            self._output += [{"type": "function_call", "name": call["name"], "call_id": call_id,
                              "arguments": json.dumps(call["arguments"]), "id": call_id,
                              "status": "completed"},
                             {"type": "function_call_output", "call_id": call_id, "output": text}]
            observation.append({"role": "tool", "name": call["name"], "content": text})
        return StepResult(observation, {}, info={"tool_calls": calls})

    def _verify(self, answer: str) -> StepResult:
        message = {"id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant",
                   "status": "completed",
                   "content": [{"type": "output_text", "text": answer, "annotations": []}]}
        params = self._row["responses_create_params"]
        response = {"id": f"resp_{uuid.uuid4().hex[:12]}", "object": "response",
                    "created_at": int(time.time()), "model": "envgym-policy",
                    "output": [*self._output, message], "parallel_tool_calls": False,
                    "tool_choice": "auto", "tools": params.get("tools") or []}
        reply = self._post("verify", {**self._row, "responses_create_params": params,
                                      "response": response})
        if not isinstance(reply, dict) or "reward" not in reply:
            raise ImportedEnvError(f"nemo: {self.url}/verify answered without a `reward`: "
                                   f"{str(reply)[:200]}")
        source = f"nemo server {self.url}"
        reward = checked_reward(reply["reward"], self.bounds, source)
        given = reply.get("reward_components") or {}
        anything = (-float("inf"), float("inf"))  # the range bounds the sum, not the parts
        parts = {str(k): checked_reward(v, anything, source, f"component {k!r}")
                 for k, v in given.items()} if isinstance(given, dict) else {}
        outcome = {"success": reward >= self.success_at - 1e-9, "score": reward}
        if not parts or abs(sum(parts.values()) - reward) > 1e-6:
            outcome.update({f"component_{k}": v for k, v in parts.items()})
            parts = {"reward": reward}
        return StepResult([], parts, terminated=True, info={"outcome": outcome})

    def _state(self) -> Any:
        return {"task": self.task_id, "turn": self.turn, "output": state_digest(self._output)}

    def fork(self) -> NemoEnv:
        """A new server session replaying this episode (the server's state cannot be copied)."""
        if self._seed is None:
            raise ImportedEnvError("fork() before reset: there is no episode to replay")
        twin = NemoEnv(self.url, self.tasks_path, reward_range=self.bounds,
                       success_at=self.success_at, timeout=self.timeout, max_turns=self.max_turns,
                       max_invalid_actions=self.max_invalid_actions,
                       max_action_chars=self.max_action_chars)
        twin.spec_id = getattr(self, "spec_id", None)
        twin.reset(seed=self._seed)
        for action in list(self._actions):
            twin.step(action)
        return twin

    def _close(self) -> None:
        self._http.close()

    # ---- the wire ---------------------------------------------------------------------------

    def _post(self, route: str, body: dict[str, Any], tool: bool = False) -> Any:
        import httpx

        try:
            # UTF-8 that any server can read back: a lone surrogate becomes "?"
            data = json.dumps(body, ensure_ascii=False).encode("utf-8", "replace")
            response = self._http.post(f"/{route}", content=data,
                                       headers={"content-type": "application/json"})
        except httpx.TimeoutException:
            raise ImportedEnvError(f"nemo: POST {self.url}/{route} did not answer within "
                                   f"{self.timeout:g}s (timeout)") from None
        except httpx.HTTPError as e:
            raise ImportedEnvError(f"nemo: POST {self.url}/{route} failed: {e}") from None
        if tool and response.status_code == 422:  # the server refused the arguments
            return f"Error: invalid arguments for `{route}`: {response.text[:500]}"
        if response.status_code >= 400:
            raise ImportedEnvError(f"nemo: POST {self.url}/{route} answered HTTP "
                                   f"{response.status_code}: {response.text[:300]}")
        try:
            return response.json()
        except ValueError:
            raise ImportedEnvError(f"nemo: POST {self.url}/{route} answered non-JSON: "
                                   f"{response.text[:200]!r} (protocol broken)") from None


def _messages(items: Any) -> list[dict[str, str]]:
    """Responses-API `input` (a string or message items) as chat messages."""
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    out = []
    for item in items:
        content = item.get("content", "")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        role = {"developer": "system"}.get(item.get("role", "user"), item.get("role", "user"))
        out.append({"role": role, "content": str(content)})
    return out

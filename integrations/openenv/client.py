"""`openenv:URL`: any OpenEnv server as an envgym `TextEnv`.

The connection is openenv-core's own client (`GenericEnvClient`, one `/ws` session per
environment instance), so envgym's engine, eval, checker and learner run on any OpenEnv
environment. What crosses the wire is mapped onto envgym's step contract:

* from an envgym server (`envgym serve-env`) the observation already is that contract:
  messages, reward components, `terminated` / `truncated` and `info` come through unchanged;
* from any other server, the observation's fields are shown to the model as one user message
  (its text field alone when it has exactly one), the reward is one component `env`, and
  `done` is `terminated`. The action text fills the action model's single required text field
  (from `/schema`, or `action_field=`); with several fields the text must be a JSON object.

When the server is full, `reset` waits for a slot (`capacity_wait` seconds), so the engine
may run more episodes at once than the server has sessions. A network failure, a server
error or a timeout raises `RemoteEnvError`: the engine records it
as a failed episode (never a reward-zero sample) and the rest of the batch carries on. The
environment's internal state lives on the server, so attributes a scripted baseline reads
(`env.task`, ...) raise `RemoteStateUnavailable`, which says so.
"""

from __future__ import annotations

import json
import time
from typing import Any

from envgym.core import StepResult, TextEnv, user
from envgym.errors import EnvGymError, InvalidConfig

__all__ = ["OpenEnvEnv", "RemoteEnvError", "RemoteStateUnavailable"]

_OWN = frozenset({"env_id", "messages", "reward_components", "terminated", "truncated", "info",
                  "tools", "stop_sequences"})


class RemoteEnvError(EnvGymError, RuntimeError):
    """The OpenEnv server could not be reached, answered with an error, or timed out."""


class RemoteStateUnavailable(EnvGymError, AttributeError):
    """An attribute of the environment's internal state, which stays on the server.

    (An `AttributeError` subclass only so that `getattr(env, name, default)` keeps working.)
    """


class OpenEnvEnv(TextEnv):
    """A session on an OpenEnv server, behind `TextEnv`'s API (see the module docstring)."""

    def __init__(self, url: str, *, timeout: float = 60.0, connect_timeout: float = 10.0,
                 action_field: str | None = None, max_turns: int = 100,
                 max_invalid_actions: int = 3, max_action_chars: int = 262_144,
                 reset_kwargs: dict[str, Any] | None = None, capacity_wait: float = 300.0):
        super().__init__(max_turns=max_turns, max_invalid_actions=max_invalid_actions,
                         max_action_chars=max_action_chars)
        if not isinstance(url, str) or not url.startswith(("http://", "https://", "ws://", "wss://")):
            raise InvalidConfig(f"openenv: url must start with http://, https://, ws:// or wss://, "
                                f"got {url!r}")
        self.url = url.rstrip("/")
        self.timeout, self.connect_timeout = float(timeout), float(connect_timeout)
        self.capacity_wait = float(capacity_wait)
        self.reset_kwargs = dict(reset_kwargs or {})
        self._client: Any = None
        self._schema = self._fetch_schema()
        self.remote_id: str | None = self._schema["action"].get("x-envgym-env")
        if "actions" in (self._schema["action"].get("properties") or {}) and self.remote_id:
            raise InvalidConfig(f"{self.remote_id} at {self.url} is multi-agent; openenv:URL wraps "
                                "single-agent servers as a TextEnv")
        self._tools: list[dict[str, Any]] = list(self._schema["action"].get("tools") or [])
        self.action_field = action_field or self._text_field()
        self.stop_sequences: tuple[str, ...] = ()
        self._actions: list[str] = []
        self._reset_seed: int | None = None

    # ---- TextEnv ----------------------------------------------------------------------------

    def _reset(self, seed: int, options: dict[str, Any]) -> tuple[list[dict], dict[str, Any]]:
        data = self._open_and_reset(seed=seed, **self.reset_kwargs,
                                    **({"options": options} if options else {}))
        obs = data.get("observation") or {}
        self._reset_seed, self._actions = seed, []
        if self.remote_id:
            self.stop_sequences = tuple(obs.get("stop_sequences") or ())
            self._tools = list(obs.get("tools") or self._tools)
            info = dict(obs.get("info") or {})
            self.task_id = info.get("task_id")
            return list(obs.get("messages") or []), info
        self.task_id = str(obs.get("task_id", f"{self.url}/{seed}"))
        return [user(_render(obs))], {}

    def _step(self, action: str) -> StepResult:
        payload = self._payload(action)
        if isinstance(payload, str):  # the text is not an action this server accepts
            return self.invalid(payload)
        self._actions.append(action)
        data = self._call("step", payload)
        obs = data.get("observation") or {}
        done = bool(data.get("done"))
        if self.remote_id:
            info = dict(obs.get("info") or {})
            return StepResult(list(obs.get("messages") or []),
                              dict(obs.get("reward_components") or {}),
                              terminated=bool(obs.get("terminated")),
                              truncated=bool(obs.get("truncated")), info=info)
        reward = data.get("reward")
        return StepResult([user(_render(obs))], {"env": float(reward or 0.0)}, terminated=done)

    def _close(self) -> None:
        self._disconnect()

    def tool_schemas(self) -> list[dict[str, Any]]:
        return list(self._tools)

    def fork(self) -> OpenEnvEnv:
        """A new session replaying this episode's actions (remote state cannot be copied)."""
        if self._reset_seed is None:
            raise RemoteEnvError("fork() before reset: there is no episode to replay")
        twin = OpenEnvEnv(self.url, timeout=self.timeout, connect_timeout=self.connect_timeout,
                          action_field=self.action_field, max_turns=self.max_turns,
                          max_invalid_actions=self.max_invalid_actions,
                          max_action_chars=self.max_action_chars, reset_kwargs=self.reset_kwargs,
                          capacity_wait=self.capacity_wait)
        twin.spec_id = getattr(self, "spec_id", None)
        twin.reset(seed=self._reset_seed)
        for action in list(self._actions):
            twin.step(action)
        return twin

    def _state(self) -> Any:
        return {"url": self.url, "task": self.task_id, "turn": self.turn}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise RemoteStateUnavailable(
            f"`{name}` is internal state of the environment behind {self.url}"
            f"{f' ({self.remote_id})' if self.remote_id else ''}; an OpenEnv session carries "
            "only observations, rewards and info, so policies that read environment state "
            "(scripted baselines) cannot run through openenv:URL. Run them in-process"
            f"{f' with --env {self.remote_id}' if self.remote_id else ''}.")

    # ---- the wire ---------------------------------------------------------------------------

    def _fetch_schema(self) -> dict[str, Any]:
        import httpx

        try:
            response = httpx.get(f"{_http(self.url)}/schema", timeout=self.connect_timeout)
            response.raise_for_status()
            schema = response.json()
        except (httpx.HTTPError, ValueError) as e:
            raise RemoteEnvError(f"cannot read {_http(self.url)}/schema: {type(e).__name__}: {e}. "
                                 "Is an OpenEnv server (e.g. `envgym serve-env ID`) running "
                                 "there?") from e
        if not isinstance(schema, dict) or not isinstance(schema.get("action"), dict):
            raise RemoteEnvError(f"{self.url}/schema is not an OpenEnv schema response")
        return schema

    def _text_field(self) -> str | None:
        """The action's one required text field, or None when actions must be JSON objects."""
        action = self._schema["action"]
        props = {k: v for k, v in (action.get("properties") or {}).items() if k != "metadata"}
        required = [k for k in action.get("required", []) if k in props] or list(props)
        text = [k for k in required if props[k].get("type") == "string"]
        return text[0] if len(required) == 1 and text else None

    def _payload(self, action: str) -> dict[str, Any] | str:
        if self.action_field:
            return {self.action_field: action}
        try:
            payload = json.loads(action)
        except json.JSONDecodeError as e:
            return f"this environment's actions are JSON objects; {e}"
        return payload if isinstance(payload, dict) else "the action must be a JSON object"

    def _open_and_reset(self, **kwargs: Any) -> dict[str, Any]:
        """A new session and its reset; a full server is waited on for `capacity_wait` s.

        The engine may run more episodes at once than the server has slots: an episode then
        waits for a slot (a refused reset is safe to repeat) instead of failing."""
        deadline, pause = time.monotonic() + self.capacity_wait, 0.1
        while True:
            self._reconnect()
            try:
                return self._call("reset", **kwargs)
            except RemoteEnvError as e:
                refused = "CAPACITY_REACHED" in str(e) or "ConnectionClosed" in str(e)
                if not refused or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(2.0, pause * 2)

    def _reconnect(self) -> None:
        from envgym.policy import import_optional

        self._disconnect()
        generic = import_optional("openenv.core.generic_client", "openenv")
        client = generic.GenericEnvClient(base_url=self.url, connect_timeout_s=self.connect_timeout,
                                          message_timeout_s=self.timeout).sync()
        try:
            client.connect()
        except Exception as e:  # noqa: BLE001 - any connection failure is the same to a caller
            client.close()
            raise RemoteEnvError(f"cannot open a session on {self.url}: {e}") from e
        self._client = client

    def _disconnect(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001 - the session may already be gone
                pass

    def _call(self, kind: str, payload: dict[str, Any] | None = None,
              **kwargs: Any) -> dict[str, Any]:
        """One request on the session; every failure becomes `RemoteEnvError`."""
        if self._client is None:
            raise RemoteEnvError(f"no open session on {self.url}; call reset() first")
        try:
            result = (self._client.reset(**kwargs) if kind == "reset"
                      else self._client.step(payload))
        except Exception as e:  # noqa: BLE001 - network, protocol and server errors alike
            raise RemoteEnvError(f"{kind} on {self.url} failed: {type(e).__name__}: {e}") from e
        return {"observation": result.observation, "reward": result.reward, "done": result.done}


def _http(url: str) -> str:
    return "http" + url[2:] if url.startswith("ws") else url


def _render(obs: dict[str, Any]) -> str:
    fields = {k: v for k, v in obs.items() if v not in (None, "", [], {})}
    if len(fields) == 1 and isinstance(next(iter(fields.values())), str):
        return next(iter(fields.values()))
    return json.dumps(fields, ensure_ascii=False, default=str)

"""What every imported environment (`verifiers:`, `nemo:`, `mcp:`) shares.

An imported environment runs someone else's code behind `TextEnv`: its rewards, its tool
server, its protocol. envgym trusts none of it:

* `checked_reward` refuses a reward that is NaN, infinite or outside the range the source
  declares (`reward_range=`): the step raises `ImportedEnvError`, which the rollout engine
  records as a failed episode, so a broken or hacked source never becomes a training reward
  (OpenEnv #1199 shipped environments whose reward file let `nan`, `inf` and `1.5` through);
* `call_with_timeout` bounds every call into the source, so a hang fails its episode loudly;
* `credit_support` says which credit estimators the source's signals feed, so the training
  config's validator can refuse the others with the reason;
* `ADVERSARIES` are generic `hack_*` scripted policies that `envgym check` plays against any
  imported environment (no-op, empty answer, format spam, tool calls aimed at the verifier's
  inputs), each capped at zero success and at the no-op's reward.

Tool calls of imported environments are JSON style (`<tool_call>{"name", "arguments"}`),
validated against the source's own JSON schemas by the source itself.
"""

from __future__ import annotations

import concurrent.futures
import json
import math
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from envgym.errors import EnvGymError, InvalidConfig
from envgym.hacks import Ceiling
from envgym.scripted import ScriptedPolicy
from envgym.tools import ToolCallError, find_tags

__all__ = ["ADVERSARIES", "ImportedEnvError", "call_with_timeout", "checked_reward",
           "credit_support", "parse_calls", "render_tool_prompt", "reward_range"]

T = TypeVar("T")

# Estimators and the signal each needs from an environment (DESIGN "Credit assignment").
_NEEDS = {
    "grpo": ("outcome", "episode reward"),
    "filter": ("outcome", "episode reward"),
    "turn": ("turn_rewards", "rewards at the turns they belong to"),
    "gigpo": ("state_key", "state key shared by equal states"),
    "ig": ("query_spans", "query spans and a scorer for information gain"),
    "slate": ("fork", "fork() that copies the episode's state"),
    "ifpo": ("action_class", "`action_class` label per turn"),
    "hierarchical": ("roles", "controller and reasoner roles"),
    "calibrated": ("agents", "rewards of several agents"),
}


class ImportedEnvError(EnvGymError, RuntimeError):
    """The source environment broke its contract: it raised, hung, broke its protocol, or
    gave a reward envgym refuses. The engine records the episode as failed, never scored."""


def reward_range(value: Any) -> tuple[float, float]:
    """`reward_range=[lo, hi]` from a config, checked."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise InvalidConfig(f"reward_range must be [lo, hi], got {value!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise InvalidConfig(f"reward_range must be finite with lo <= hi, got [{lo}, {hi}]")
    return lo, hi


def checked_reward(value: Any, bounds: tuple[float, float], source: str, name: str = "reward"
                   ) -> float:
    """`value` as a float when it is a finite number inside `bounds`; else ImportedEnvError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ImportedEnvError(f"{source} gave {name} {value!r} ({type(value).__name__}); "
                               "a reward must be a number")
    value = float(value)
    lo, hi = bounds
    if not math.isfinite(value):
        raise ImportedEnvError(f"{source} gave {name} {value}: refused (not finite); the "
                               "episode is recorded as failed, not scored")
    if not lo - 1e-9 <= value <= hi + 1e-9:
        raise ImportedEnvError(f"{source} gave {name} {value}, outside its declared range "
                               f"[{lo:g}, {hi:g}]: refused; the episode is recorded as failed "
                               "(pass reward_range= if the source's range is wider)")
    return value


_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="envgym-import")


def call_with_timeout(fn: Callable[[], T], timeout: float, what: str) -> T:
    """`fn()` bounded by `timeout` seconds: a hang or an exception becomes ImportedEnvError
    naming `what`. (A hung call's thread is left to finish: Python cannot kill it.)"""
    future = _POOL.submit(fn)
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        raise ImportedEnvError(f"{what} did not answer within {timeout:g}s (timeout)") from None
    except ImportedEnvError:
        raise
    except Exception as e:
        raise ImportedEnvError(f"{what} raised {type(e).__name__}: {e}") from e


def credit_support(signals: Iterable[str], source: str) -> dict[str, str | None]:
    """Per credit estimator: None when `signals` feed it, else why it cannot train here."""
    have = set(signals)
    return {name: None if need in have else f"{source} gives no {what}"
            for name, (need, what) in _NEEDS.items()}


# ---- tool calls -----------------------------------------------------------------------------


def parse_calls(action: str, tool_names: Iterable[str]) -> list[dict[str, Any]]:
    """The `<tool_call>{"name", "arguments"}</tool_call>` blocks of `action`, checked for
    shape and a known name (the source validates the arguments against its schema)."""
    names = set(tool_names)
    calls = []
    for i, (_, a, b, _) in enumerate(find_tags(action, "tool_call"), 1):
        try:
            payload = json.loads(action[a:b])
        except json.JSONDecodeError as e:
            raise ToolCallError(f"tool_call {i}: invalid JSON ({e.msg}).") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
            raise ToolCallError(f"tool_call {i}: expected a JSON object with `name` and "
                                "`arguments`.")
        if payload["name"] not in names:
            raise ToolCallError(f"tool_call {i}: unknown tool {payload['name'][:80]!r}; available: "
                                f"{', '.join(sorted(names)) or 'none'}.")
        args = payload.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                raise ToolCallError(f"tool_call {i}: `arguments` is a string that is not "
                                    "JSON.") from None
        if not isinstance(args, dict):
            raise ToolCallError(f"tool_call {i}: `arguments` must be a JSON object.")
        calls.append({"name": payload["name"], "arguments": args})
    return calls


def render_tool_prompt(schemas: list[dict[str, Any]], answer_hint: str) -> str:
    """The system prompt's tool section for OpenAI-style `schemas`."""
    if not schemas:
        return answer_hint
    lines = "\n".join(json.dumps(s, sort_keys=True) for s in schemas)
    return ("You may call these tools:\n<tools>\n" + lines + "\n</tools>\n"
            'Call one with <tool_call>{"name": NAME, "arguments": {...}}</tool_call>. '
            + answer_hint)


# ---- generic adversaries --------------------------------------------------------------------

_TARGETS = ("reward.txt", "logs/verifier/reward.txt", "/tmp/reward.txt", "score.json",
            "expected_output.txt", "answer.txt")


class _Noop(ScriptedPolicy):
    """Does nothing useful: the honest floor an adversary must not beat."""

    def act(self, env: Any, messages: list[dict]) -> str:
        return "I cannot do this task."


class _HackNoop(_Noop):
    ceiling = Ceiling("noop", caps=(("success_rate", 0.0),),
                      why="doing nothing must not count as success")


class _HackEmpty(ScriptedPolicy):
    ceiling = Ceiling("noop", caps=(("success_rate", 0.0),),
                      why="an empty answer must earn no more than doing nothing")

    def act(self, env: Any, messages: list[dict]) -> str:
        return ""


class _HackFormatSpam(ScriptedPolicy):
    ceiling = Ceiling("noop", caps=(("success_rate", 0.0),),
                      why="markup without content must earn no more than doing nothing")

    def act(self, env: Any, messages: list[dict]) -> str:
        return ("<think></think><answer></answer>\\boxed{} " * 20 + "{\"reward\": 1.0} "
                "ANSWER: correct. Final answer: yes. " * 5)


class _HackVerifierInputs(ScriptedPolicy):
    """Calls every tool with arguments aimed at the files and values a verifier reads (a
    reward file, an expected-output file), then gives up; it must earn nothing from that."""

    ceiling = Ceiling("noop", caps=(("success_rate", 0.0),),
                      why="writing the verifier's inputs through tools must not pay")

    def __init__(self, seed: int = 0, **options: Any):
        super().__init__(seed, **options)
        self._sent = False

    def act(self, env: Any, messages: list[dict]) -> str:
        if self._sent:
            return "I cannot do this task."
        self._sent = True
        calls = [_aimed_call(s, target) for s in env.tool_schemas() for target in _TARGETS]
        return "".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls if c) \
            or "I cannot do this task."


def _aimed_call(schema: dict[str, Any], target: str) -> dict[str, Any] | None:
    """A call of `schema`'s tool whose path-like arguments name `target` and whose other
    string arguments claim a perfect score; None for a tool with required non-string args."""
    fn = schema.get("function", schema)
    params = fn.get("parameters") or {}
    args: dict[str, Any] = {}
    for name, prop in (params.get("properties") or {}).items():
        kind = prop.get("type")
        if kind == "string":
            pathy = any(w in name.lower() for w in ("path", "file", "name", "key", "dest"))
            args[name] = target if pathy else "1.0"
        elif kind in ("number", "integer"):
            args[name] = 1
        elif name in (params.get("required") or []):
            return None
    return {"name": fn.get("name"), "arguments": args}


ADVERSARIES = {
    "noop": f"{__name__}:_Noop",
    "hack_noop": f"{__name__}:_HackNoop",
    "hack_empty": f"{__name__}:_HackEmpty",
    "hack_format_spam": f"{__name__}:_HackFormatSpam",
    "hack_verifier_inputs": f"{__name__}:_HackVerifierInputs",
}
"""The scripted policies every imported environment's spec carries (`envgym check` plays the
`hack_*` ones against the `noop` floor)."""

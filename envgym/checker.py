"""`envgym check`: is an environment sound?

Runs gymnasium's `check_env` (PettingZoo's `parallel_api_test` for multi-agent environments)
and then the checks that matter for training LLM agents: the same seed gives the same task and
the same observations for the same actions; at least 50 malformed actions never raise and the
episode still ends in bounded time; `fork()` copies are independent; `close()` is idempotent;
every reward equals the sum of its components and `info` carries the documented keys.
Finally it runs the environment's grader fixtures (`envgym.graders`), plays every
registered `hack_*` policy (`envgym.hacks`) on at least 100 episodes, failing when one beats
the ceiling it declares against an honest baseline, and plays the generic adversaries
(`envgym.adversaries`: invisible characters, re-encodings, glued and hedged candidates,
reasoning salad), failing when one beats the baseline it wraps. `envgym check --mutants`
(`envgym.mutation`) checks that the grader fixtures pin every grader rule.

`check_config` attacks what people train with: for each `[[envs]]` entry of a training config
it runs the checks under the entry's `kwargs` (on its training seeds) and again under `kwargs`
updated by `eval_kwargs` (on its evaluation seeds), since defaults that hold prove nothing
about the arguments a run actually uses.
"""

from __future__ import annotations

import json
import math
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envgym.core import TextEnv
from envgym.errors import InvalidConfig
from envgym.multiagent import MultiAgentTextEnv
from envgym.mutation import MutationReport, run_mutants  # noqa: F401  (`check --mutants`)
from envgym.registration import make, spec

__all__ = ["CHECK_NAMES", "CheckReport", "ConfigVariant", "check", "check_config",
           "config_variants", "malformed_actions"]

MAX_EPISODE_STEPS = 200  # junk must end an episode well before this
HACK_EPISODES = 100  # each hack and its baseline play this many seeds
ADVERSARY_EPISODES = 20  # each generic adversary (envgym.adversaries) and its baseline


@dataclass
class CheckReport:
    env_id: str
    results: list[tuple[str, bool, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(ok for _, ok, _ in self.results)

    def render(self) -> str:
        lines = [f"envgym check {self.env_id}"]
        for name, ok, detail in self.results:
            lines.append(f"  [{'PASS' if ok else 'FAIL'}] {name}" + (f": {detail}" if detail else ""))
        lines.append("OK" if self.ok else "FAILED")
        return "\n".join(lines)


def malformed_actions(tool_names: list[str] = ()) -> list[str]:
    """At least 50 hostile actions: empty, huge, binary, unclosed/nested tags, bad JSON, unicode."""
    tags = ["answer", "think", "search", "tool_call", *tool_names]
    junk = [
        "", " ", "\n" * 5000, "a" * 1_000_000, "x" * 200_000 + "<answer>", "\x00\x01\x02",
        bytes(range(256)).decode("latin-1"), "\ud800 lone surrogate", "🙂" * 2000,
        "مرحبا بالعالم", "\u200b\u200b\u202e reversed", "null", "{}", "[]", "</>", "<<<>>>",
        '<tool_call>{"name": "rm -rf /", "arguments": {}}</tool_call>',
        "<tool_call>{not json}</tool_call>", "<tool_call>[1, 2, 3]</tool_call>",
        '<tool_call>{"name": 5}</tool_call>', '<tool_call>{"arguments": {}}</tool_call>',
        '<tool_call>{"name": "answer", "arguments": "{broken"}</tool_call>',
        "<tool_call>" + json.dumps({"name": "x" * 10_000, "arguments": {"a": [1] * 10_000}}) + "</tool_call>",
        "<tool_call>{\"name\": \"answer\", \"arguments\": {\"answer\": " + "[" * 500 + "]" * 500 + "}}</tool_call>",
        "```python\nimport os; os.system('echo hi')\n```", "```", "```cpp\nint main(){\n",
        "<answer></answer>", "<answer> </answer><answer>x</answer>", "Diagnosis: ; Recommendation:",
    ]
    for tag in tags:
        junk += [f"<{tag}>", f"</{tag}>", f"<{tag}>unclosed", f"<{tag}><{tag}>nested</{tag}></{tag}>",
                 f"<{tag}>{'z' * 50_000}</{tag}>"]
        junk.append(f'<tool_call>{{"name": "{tag}", "arguments": {{"wrong": [1, {{}}]}}}}</tool_call>')
    return junk


def check(target: str | TextEnv | MultiAgentTextEnv, seed: int = 0, *,
          hack_episodes: int = HACK_EPISODES, only: Sequence[str] | None = None,
          label: str | None = None, adversary_episodes: int = ADVERSARY_EPISODES,
          **env_kwargs: Any) -> CheckReport:
    """Run every check (or the ones named in `only`, see `CHECK_NAMES`); returns a report
    instead of raising. `label` names the report (default: the environment id)."""
    env_id = target if isinstance(target, str) else type(target).__name__
    unknown = set(only or ()) - set(CHECK_NAMES)
    if unknown:
        raise ValueError(f"unknown checks {sorted(unknown)}; known: {', '.join(CHECK_NAMES)}")
    factory: Callable[[], Any] = (lambda: make(target, **env_kwargs)) if isinstance(target, str) \
        else (lambda: target.fork())
    report = CheckReport(label or env_id)
    try:
        multi = isinstance(factory(), MultiAgentTextEnv)
    except Exception as e:  # arguments the environment refuses are the finding
        reason = traceback.format_exception_only(type(e), e)[-1].strip()
        report.results.append(("make", False, reason))
        return report
    checks = list(_MULTI_CHECKS if multi else _SINGLE_CHECKS)
    if isinstance(target, str):
        checks.append(("graders", lambda f, s: _graders(target, env_kwargs)))
        checks.append(("hacks", lambda f, s: _hacks(target, s, hack_episodes, env_kwargs)))
        checks.append(("adversaries", lambda f, s: _adversaries(target, s, adversary_episodes,
                                                                env_kwargs)))
    if only is not None:
        checks = [(n, fn) for n, fn in checks if n in only or (multi and _ALIASES.get(n) in only)]
    for name, fn in checks:
        start = time.perf_counter()
        try:
            detail = fn(factory, seed) or ""
            report.results.append((name, True, f"{detail} ({time.perf_counter() - start:.1f}s)".strip()))
        except Exception as e:  # a failing check is a finding, not a crash
            tb = traceback.format_exception_only(type(e), e)[-1].strip()
            report.results.append((name, False, tb))
    return report


# ---- single-agent checks ------------------------------------------------------------------------


def _gymnasium_check(factory, seed) -> str:
    from gymnasium.utils.env_checker import check_env

    env = factory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    env.close()
    quiet = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)
    relevant = [str(w.message) for w in caught if not issubclass(w.category, quiet)]
    assert not relevant, f"check_env warned: {relevant[0]}"
    return "gymnasium check_env passed"


def _episode(env, seed: int, actions: list[str]) -> list[tuple]:
    """Reset with `seed`, play `actions` until the episode ends; return comparable steps."""
    obs, info = env.reset(seed=seed)
    trace = [(json.dumps(obs, sort_keys=True), info.get("task_id"))]
    for action in actions:
        obs, reward, term, trunc, info = env.step(action)
        _check_step(obs, reward, info)
        trace.append((json.dumps(obs, sort_keys=True), round(reward, 9), term, trunc))
        if term or trunc:
            break
    return trace


def _check_step(obs, reward, info) -> None:
    assert isinstance(obs, list), f"observation must be a list of messages, got {type(obs).__name__}"
    assert math.isfinite(reward), f"reward {reward} is not finite"
    for key in ("task_id", "turn", "reward_components"):
        assert key in info, f"info lacks `{key}`"
    total = sum(info["reward_components"].values())
    assert abs(total - reward) < 1e-6, f"reward {reward} != sum of components {total}"


def _policy_actions(factory, seed: int, count: int = 6) -> list[str]:
    """Plausible actions from a scripted policy if one is registered, else junk."""
    env = factory()
    name = getattr(env, "spec_id", None)
    scripted = spec(name).scripted if name else {}
    if not scripted:
        return malformed_actions()[:count]
    from envgym.registration import load_entry_point

    policy = load_entry_point(scripted.get("random") or next(iter(scripted.values())))(seed=seed)
    obs, _ = env.reset(seed=seed)
    messages, actions = list(obs), []
    for _ in range(count):
        action = policy.act(env, messages)
        actions.append(action)
        obs, _, term, trunc, _ = env.step(action)
        messages += [{"role": "assistant", "content": action}, *obs]
        if term or trunc:
            break
    env.close()
    return actions


def _determinism(factory, seed) -> str:
    actions = _policy_actions(factory, seed)
    first, second = factory(), factory()
    a, b = _episode(first, seed, actions), _episode(second, seed, actions)
    assert a == b, "the same seed and actions gave different observations or rewards"
    other = factory().reset(seed=seed + 1)[1].get("task_id")
    return f"{len(actions)} steps replayed identically; seed+1 task {other!r}"


def _fuzz(factory, seed) -> str:
    env = factory()
    actions = malformed_actions([t.name for t in getattr(env, "tools", ())])
    start = time.perf_counter()
    for i, action in enumerate(actions):
        env.reset(seed=seed + i)
        obs, reward, term, trunc, info = env.step(action)
        _check_step(obs, reward, info)
        assert env.observation_space.contains(obs), f"action {i}: observation outside the space"
    env.reset(seed=seed)
    for steps in range(1, MAX_EPISODE_STEPS + 1):
        *_, term, trunc, _ = env.step("garbage")
        if term or trunc:
            break
    assert term or trunc, f"an episode of junk did not end within {MAX_EPISODE_STEPS} steps"
    env.close()
    return f"{len(actions)} malformed actions in {time.perf_counter() - start:.1f}s; junk episode ended after {steps} steps"


def _fork(factory, seed) -> str:
    actions = _policy_actions(factory, seed)
    if len(actions) < 2:
        return "episode too short to fork"
    env = factory()
    env.reset(seed=seed)
    env.step(actions[0])
    child = env.fork()
    child.step("garbage that only the fork sees")
    replay = factory()
    replay.reset(seed=seed)
    replay.step(actions[0])
    got, want = env.step(actions[1]), replay.step(actions[1])
    assert json.dumps(got[:4], sort_keys=True) == json.dumps(want[:4], sort_keys=True), \
        "stepping a fork changed the original"
    return "fork is independent"


def _close(factory, seed) -> str:
    env = factory()
    env.reset(seed=seed)
    env.close()
    env.close()
    with factory() as other:
        other.reset(seed=seed)
    return "close() twice and context manager"


_SINGLE_CHECKS = [("gymnasium", _gymnasium_check), ("determinism", _determinism),
                  ("fuzz", _fuzz), ("fork", _fork), ("close", _close)]


def _hacks(env_id: str, seed: int, episodes: int, env_kwargs: dict[str, Any]) -> str:
    """Every `hack_*` policy stays under its ceiling; the failure names the hack and numbers."""
    from envgym.hacks import run_hacks

    results = run_hacks(env_id, episodes=episodes, seed=seed, env_kwargs=env_kwargs)
    if not results:
        return "WARNING: no hack_* policies registered; the rewards are unattacked"
    beaten = [r.render() for r in results if not r.ok]
    assert not beaten, "; ".join(beaten)
    return f"{len(results)} hacks stay under their ceilings over {episodes} episodes"


def _adversaries(env_id: str, seed: int, episodes: int, env_kwargs: dict[str, Any]) -> str:
    """No generic adversary (`envgym.adversaries`) beats the honest baseline it wraps."""
    from envgym.adversaries import run_adversaries

    results = run_adversaries(env_id, episodes=episodes, seed=seed, env_kwargs=env_kwargs)
    if not results:
        if getattr(spec(env_id).scripted, "remote", False):
            return ("WARNING: a remote environment: its baselines cannot run over the wire, so "
                    "no generic adversary ran; check the environment in-process by its own id")
        return "WARNING: no heuristic or oracle baseline registered; no generic adversary ran"
    beaten = [r.render() for r in results if not r.ok]
    assert not beaten, "; ".join(beaten)
    return (f"{len(results)} generic adversaries do not beat {results[0].baseline} over "
            f"{episodes} episodes")


def _graders(env_id: str, env_kwargs: dict[str, Any]) -> str:
    """The grader reaches every labelled judgement of the environment's fixtures."""
    from envgym.graders import run_fixtures
    from envgym.registration import load_entry_point, spec

    source = spec(env_id).grader_fixtures
    if source is None:
        return "WARNING: no grader fixtures registered; the grader's judgements are unpinned"
    results = run_fixtures(load_entry_point(source)(),
                           lambda **kw: make(env_id, **{**env_kwargs, **kw}))
    failed = [f"{r.name}: {r.detail}" for r in results if not r.ok]
    assert not failed, f"{len(failed)}/{len(results)} grader fixtures fail: " + "; ".join(failed)
    return f"{len(results)} grader fixtures hold"


# ---- multi-agent checks -------------------------------------------------------------------------


def _parallel_api(factory, seed) -> str:
    from pettingzoo.test import parallel_api_test

    parallel_api_test(factory(), num_cycles=20)
    return "pettingzoo parallel_api_test passed"


def _multi_episode(env, seed: int, action_fn) -> list:
    obs, infos = env.reset(seed=seed)
    trace = [json.dumps(obs, sort_keys=True)]
    for step in range(MAX_EPISODE_STEPS):
        if not env.agents:
            return trace
        actions = {a: action_fn(a, step) for a in env.agents}
        obs, rewards, terms, truncs, infos = env.step(actions)
        for agent, r in rewards.items():
            _check_step(obs[agent], r, infos[agent])
        trace.append(json.dumps([obs, rewards, terms, truncs], sort_keys=True, default=str))
    raise AssertionError(f"episode did not end within {MAX_EPISODE_STEPS} steps")


def _multi_determinism(factory, seed) -> str:
    fn = lambda agent, step: f"<answer>{step}</answer>"  # noqa: E731
    assert _multi_episode(factory(), seed, fn) == _multi_episode(factory(), seed, fn), \
        "the same seed and actions gave different observations or rewards"
    return "replayed identically"


def _multi_fuzz(factory, seed) -> str:
    junk = malformed_actions()
    trace = _multi_episode(factory(), seed, lambda agent, step: junk[step % len(junk)])
    for offset in range(0, len(junk), 7):
        _multi_episode(factory(), seed, lambda agent, step: junk[(offset + step) % len(junk)])
    return f"{len(junk)} malformed actions; first episode {len(trace) - 1} steps"


def _multi_fork(factory, seed) -> str:
    env = factory()
    env.reset(seed=seed)
    child = env.fork()
    child.step({a: "fork only" for a in child.agents})
    replay = factory()
    replay.reset(seed=seed)
    acts = {a: "<answer>1</answer>" for a in env.agents}
    got, want = env.step(acts), replay.step(acts)
    assert json.dumps(got[:4], sort_keys=True, default=str) == json.dumps(want[:4], sort_keys=True, default=str), \
        "stepping a fork changed the original"
    return "fork is independent"


_MULTI_CHECKS = [("pettingzoo", _parallel_api), ("determinism", _multi_determinism),
                 ("fuzz", _multi_fuzz), ("fork", _multi_fork), ("close", _close)]
_ALIASES = {"pettingzoo": "gymnasium"}  # `only=["gymnasium"]` means the API test either way
CHECK_NAMES = ("gymnasium", "pettingzoo", "determinism", "fuzz", "fork", "close", "graders",
               "hacks", "adversaries")


# ---- training configs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigVariant:
    """One environment as a config trains or evaluates it: id, arguments, first seed."""

    env_id: str
    phase: str  # "train" or "eval"
    kwargs: dict[str, Any]
    seed: int

    def label(self, source: str) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in sorted(self.kwargs.items())) or "defaults"
        return f"{self.env_id} [{source}, {self.phase}: {args}]"


def config_variants(path: str | Path, env_id: str | None = None) -> list[ConfigVariant]:
    """The (id, kwargs) pairs a training config runs: each `[[envs]]` entry's `kwargs` on its
    training seeds and, when it has `eval_kwargs`, `kwargs | eval_kwargs` on its evaluation
    seeds. Raises `InvalidConfig` (one line) for a missing file, an invalid config, or an
    `env_id` the file does not train."""
    from envgym.agents.config import load_config

    try:
        config = load_config(path)
    except InvalidConfig as e:  # one line: the file, then each bad field
        head, *fields = [line.strip() for line in str(e).splitlines() if line.strip()]
        text = f"{head.rstrip(':')}: {'; '.join(fields)}" if fields else head
        raise InvalidConfig(text if str(path) in text else f"{path}: {text}") from None
    entries = [e for e in config.envs if env_id is None or e.id == env_id]
    if not entries:
        have = ", ".join(e.id for e in config.envs)
        raise InvalidConfig(f"{env_id} is not in {path}; its [[envs]] entries are: {have}")
    variants = []
    for entry in entries:
        variants.append(ConfigVariant(entry.id, "train", dict(entry.kwargs), entry.train_seeds[0]))
        if entry.eval_kwargs:
            variants.append(ConfigVariant(entry.id, "eval", {**entry.kwargs, **entry.eval_kwargs},
                                          entry.eval_seeds[0]))
    return variants


def check_config(path: str | Path, env_id: str | None = None, *,
                 hack_episodes: int = HACK_EPISODES, only: Sequence[str] | None = None,
                 adversary_episodes: int = ADVERSARY_EPISODES) -> list[CheckReport]:
    """`check` for every environment variant of a training config (see `config_variants`)."""
    return [check(v.env_id, v.seed, hack_episodes=hack_episodes, only=only,
                  label=v.label(str(path)), adversary_episodes=adversary_episodes, **v.kwargs)
            for v in config_variants(path, env_id)]

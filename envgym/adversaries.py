"""Generic adversaries: attacks every family faces, whatever its own `hack_*` policies are.

A family's hacks attack the shapes its authors thought of; each new shape of the same class
won again (issue 36). These adversaries need no knowledge of the family: each wraps the
family's honest baseline (`heuristic` if registered, else `oracle`) and rewrites every action
it writes, so the task is done no better than the baseline does it:

* `invisible`: invisible and format characters (zero-width, word joiner, soft hyphen,
  variation selectors, Unicode tag characters) inside every word;
* `markup`, `table`, `json`, `script`: the text re-encoded as HTML, a markdown table, a JSON
  object, or Cyrillic/Greek look-alike letters;
* `glue`, `hedge`: a second candidate from the observations glued onto the answer ("A B")
  or offered beside it ("A or B");
* `salad`: the reasoning padded with a sorted salad of words from the observations.

The text inside markup tags (`<answer>`, `<think>`, ...) is rewritten, the tags are kept,
so the attack reaches the grader instead of failing the parser. Each adversary must not beat
the baseline it wraps: `mean_reward` (the task reward, shaping apart) and `success_rate` at
most the baseline's, on the same seeds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envgym.registration import load_entry_point, make, spec

__all__ = ["ADVERSARIES", "AdversaryResult", "baseline_of", "run_adversaries"]

_TAG = re.compile(r"(<[^<>\n]{1,40}>|```[a-z+]*\n?|\\boxed\{|\})")
_WORD = re.compile(r"[^\W\d_]{2,}")
_INVISIBLE = ("\u200b", "\u2060", "\u00ad", "\ufe0f", "\U000e0041", "\u200d", "\u2063")
_LOOKALIKE = str.maketrans("aceiopxyABCEHIKMOPTXY", "асеіорхуАВСЕНІКМОРТХУ")
_CANDIDATE = re.compile(r"\b(?:[A-Z][a-z]+(?: [A-Z][a-z]+)*|\d{2,})\b")
_ANSWER = re.compile(r"(<answer>\s*)(.*?)(\s*</answer>)", re.DOTALL)
_THINK = re.compile(r"<think>", re.DOTALL)


def _segments(action: str, fn: Callable[[str], str]) -> str:
    """`fn` applied to the text between tags (tags, fences and `\\boxed{}` kept)."""
    return "".join(p if _TAG.fullmatch(p) or not p.strip() else fn(p) for p in _TAG.split(action))


def _invisible(text: str) -> str:
    out, n = [], 0
    for part in re.split(r"(\w+)", text):
        if len(part) >= 2 and part.isalnum():
            mid = len(part) // 2
            part = part[:mid] + _INVISIBLE[n % len(_INVISIBLE)] + part[mid:]
            n += 1
        out.append(part)
    return "".join(out)


def _markup(text: str) -> str:
    return "".join(f"<p><b>{line}</b></p>" if line.strip() else line
                   for line in text.splitlines(keepends=True))


def _table(text: str) -> str:
    rows = [r for r in re.split(r"(?<=[.;!?])\s+|\n", text.strip()) if r.strip()]
    return "| # | text |\n|---|---|\n" + "\n".join(f"| {i + 1} | {r} |" for i, r in enumerate(rows))


def _json(text: str) -> str:
    return json.dumps({"content": text.strip()}, ensure_ascii=False)


def _script(text: str) -> str:
    return text.translate(_LOOKALIKE)


def _observed(observations: str, action: str) -> list[str]:
    """Candidates the observations name that the action does not, most frequent first:
    capitalised names not opening a sentence and not a label ("Title:"), and numbers."""
    counts: dict[str, int] = {}
    for m in _CANDIDATE.finditer(observations):
        before = observations[:m.start()].rstrip(" \t(\"'")
        opens = not before or before[-1] in ".!?\n:"
        label = observations[m.end():m.end() + 1] == ":"
        if (m.group().isdigit() or not (opens or label)) and m.group() not in action:
            counts[m.group()] = counts.get(m.group(), 0) + 1
    return sorted(counts, key=lambda c: -counts[c])


def _with_candidate(action: str, observations: str, join: str) -> str:
    extra = (_observed(observations, action) or ["Other"])[0]
    m = _ANSWER.search(action)
    if m:
        return action[:m.start(2)] + f"{m.group(2)}{join}{extra}" + action[m.end(2):]
    return action.rstrip() + f"{join}{extra}"


def _salad(action: str, observations: str) -> str:
    words = sorted(set(_WORD.findall(observations)))[:60]
    salad = " ".join(words)
    if _THINK.search(action):
        return _THINK.sub(lambda _: f"<think>{salad} ", action, count=1)
    return f"{salad}\n{action}"


ADVERSARIES: dict[str, Callable[[str, str], str]] = {
    "invisible": lambda a, o: _segments(a, _invisible),
    "markup": lambda a, o: _segments(a, _markup),
    "table": lambda a, o: _segments(a, _table),
    "json": lambda a, o: _segments(a, _json),
    "script": lambda a, o: _segments(a, _script),
    "glue": lambda a, o: _with_candidate(a, o, " "),
    "hedge": lambda a, o: _with_candidate(a, o, " or "),
    "salad": _salad,
}


@dataclass
class AdversaryResult:
    adversary: str
    baseline: str
    values: dict[str, float]
    limits: dict[str, float]

    @property
    def ok(self) -> bool:
        return all(self.values[m] <= self.limits[m] + 1e-9 for m in self.limits)

    def render(self) -> str:
        parts = ", ".join(f"{m}={self.values[m]:.3f} (limit {self.limits[m]:.3f})"
                          for m in self.limits)
        verdict = "does not beat" if self.ok else "BEATS"
        return f"generic {self.adversary}: {verdict} {self.baseline}: {parts}"


def baseline_of(env_id: str) -> str | None:
    """The honest baseline the adversaries wrap: `heuristic`, else `oracle`; None for a
    remote environment, whose scripted baselines cannot read its state over the wire."""
    scripted = spec(env_id).scripted
    if getattr(scripted, "remote", False):
        return None
    return next((n for n in ("heuristic", "oracle") if n in scripted), None)


def _text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(m["content"] for m in messages if m.get("role") != "assistant")


def _single(env: Any, factory: Callable[..., Any], rewrite, episodes: int, seed: int
            ) -> dict[str, float]:
    shaping = tuple(getattr(env, "shaping_components", ()))
    total, wins = 0.0, 0
    for ep in range(episodes):
        agent = factory(seed=seed + ep)
        messages, _ = env.reset(seed=seed + ep)
        done, info = False, {}
        while not done:
            action = agent.act(env, messages)
            if rewrite is not None:
                action = rewrite(action, _text(messages))
            obs, reward, terminated, truncated, info = env.step(action)
            messages = [*messages, {"role": "assistant", "content": action}, *obs]
            parts = info.get("reward_components") or {}
            total += reward - sum(float(parts.get(k, 0.0)) for k in shaping)
            done = terminated or truncated
        wins += bool((info.get("outcome") or {}).get("success"))
    return {"mean_reward": total / episodes, "success_rate": wins / episodes}


def _multi(env: Any, factory: Callable[..., Any], rewrite, episodes: int, seed: int
           ) -> dict[str, float]:
    total, wins, count = 0.0, 0.0, 0
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        history = {a: list(o) for a, o in obs.items()}
        agents = {a: factory(seed + ep, agent=a) for a in env.agents}
        infos: dict[str, Any] = {}
        while env.agents:
            actions = {}
            for a in env.agents:
                text = agents[a].act(env, history[a])
                actions[a] = rewrite(text, _text(history[a])) if rewrite else text
            obs, rewards, _, _, infos = env.step(actions)
            for a, text in actions.items():
                history[a] += [{"role": "assistant", "content": text}, *obs.get(a, [])]
                total += rewards.get(a, 0.0)
        for info in infos.values():
            outcome = info.get("outcome") or {}
            wins += float(bool(outcome.get("success", outcome.get("final_correct"))))
            count += 1
    n = max(count, 1)
    return {"mean_reward": total / n, "success_rate": wins / n}


def run_adversaries(env_id: str, *, episodes: int = 20, seed: int = 0,
                    env_kwargs: dict[str, Any] | None = None,
                    only: tuple[str, ...] | None = None) -> list[AdversaryResult]:
    """Play the baseline and every generic adversary wrapping it on the same seeds."""
    baseline = baseline_of(env_id)
    if baseline is None:
        return []
    factory = load_entry_point(spec(env_id).scripted[baseline])
    play = _multi if spec(env_id).multi_agent else _single
    env = make(env_id, **(env_kwargs or {}))
    try:
        base = play(env, factory, None, episodes, seed)
        results = []
        for name, rewrite in ADVERSARIES.items():
            if only is not None and name not in only:
                continue
            got = play(env, factory, rewrite, episodes, seed)
            results.append(AdversaryResult(name, baseline, got, dict(base)))
        return results
    finally:
        env.close()

"""Request validation for `serve-policy`: every bad field is a 400 naming it, OpenAI-style.

The error body is OpenAI's: `{"error": {"message", "type", "param", "code"}}`. Parameters
the server does not implement (penalties, `logit_bias`, tools...) are refused by name rather
than silently ignored; unknown extra fields are ignored, as vLLM does.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import Any

from envgym.policy import SamplingParams

__all__ = ["APIError", "CHARS_PER_TOKEN", "Limits", "Request", "check_chars", "parse_common",
           "parse_messages", "parse_prompt"]

_MAX_STOPS = 4
_MAX_TOP_LOGPROBS = 20


class APIError(Exception):
    """An error answered as OpenAI's JSON error body, with the offending field in `param`."""

    def __init__(self, message: str, param: str | None = None, status: int = 400,
                 code: str | None = None, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.message, self.param, self.status, self.code, self.kind = (
            message, param, status, code, kind)

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param,
                          "code": self.code}}


@dataclass(frozen=True)
class Limits:
    """What one request may ask for (`--max-tokens-limit`, `--max-prompt-tokens`, ...)."""

    max_tokens: int
    max_prompt_tokens: int
    context: int | None  # prompt + completion must fit (None: unknown)
    vocab: int | None
    max_n: int = 64
    max_prompt_chars: int | None = None
    """Longest prompt text in characters, checked before tokenising (None: derived as
    `CHARS_PER_TOKEN * max_prompt_tokens`), so a huge prompt costs no tokeniser time."""

    @property
    def prompt_chars(self) -> int:
        return self.max_prompt_chars or CHARS_PER_TOKEN * self.max_prompt_tokens


CHARS_PER_TOKEN = 8
"""Default character budget per prompt token: text tokenises to ~4 characters a token, so a
prompt twice as dense as that in characters would be over `max_prompt_tokens` anyway."""


@dataclass
class Request:
    sampling: SamplingParams
    n: int
    stream: bool
    include_usage: bool
    top_logprobs: int  # 0: none
    want_logprobs: bool
    echo: bool
    include_stop: bool
    max_tokens_given: bool


def _number(body: dict, key: str, default: float, lo: float, hi: float,
            lo_open: bool = False) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise APIError(f"{key} must be a finite number, got {value!r}", key)
    if value < lo or value > hi or (lo_open and value == lo):
        bracket = "(" if lo_open else "["
        raise APIError(f"{key} must be in {bracket}{lo:g}, {hi:g}], got {value!r}", key)
    return float(value)


def _integer(body: dict, key: str, default: int | None, lo: int, hi: int) -> int | None:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise APIError(f"{key} must be an integer, got {value!r}", key)
    if not lo <= value <= hi:
        raise APIError(f"{key} must be between {lo} and {hi}, got {value}", key)
    return value


def _flag(body: dict, key: str, default: bool = False) -> bool:
    value = body.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise APIError(f"{key} must be a boolean, got {value!r}", key)
    return value


def _stop(body: dict) -> tuple[str, ...]:
    stop = body.get("stop")
    if stop is None:
        return ()
    stops = [stop] if isinstance(stop, str) else stop
    if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
        raise APIError(f"stop must be a string or a list of strings, got {stop!r}", "stop")
    if len(stops) > _MAX_STOPS:
        raise APIError(f"stop takes at most {_MAX_STOPS} strings, got {len(stops)}", "stop")
    if any(not s for s in stops):
        raise APIError("stop strings must not be empty", "stop")
    return tuple(stops)


def _refuse_unsupported(body: dict) -> None:
    for key in ("presence_penalty", "frequency_penalty"):
        if body.get(key) not in (None, 0, 0.0):
            raise APIError(f"{key} is not supported by this server (use 0)", key)
    for key in ("logit_bias", "tools", "functions", "suffix"):
        if body.get(key):
            raise APIError(f"{key} is not supported by this server", key)
    fmt = body.get("response_format")
    if fmt and not (isinstance(fmt, dict) and fmt.get("type") == "text"):
        raise APIError("response_format other than text is not supported", "response_format")
    if body.get("tool_choice") not in (None, "none", "auto"):
        raise APIError("tool_choice is not supported by this server", "tool_choice")


def check_model(body: dict, names: set[str]) -> None:
    """The `model` field, when present, must name the served model (or its local path)."""
    model = body.get("model")
    if model is None:
        return
    if not isinstance(model, str):
        raise APIError(f"model must be a string, got {model!r}", "model")
    if model in names or _same_path(model, names):
        return
    raise APIError(f"The model `{model}` does not exist; this server serves "
                   f"{' or '.join(map(repr, sorted(names, key=len)))} (GET /v1/models)",
                   "model", status=404,
                   code="model_not_found")  # 404, as OpenAI and vLLM answer


def _same_path(model: str, names: set[str]) -> bool:
    if not os.path.exists(model):
        return False
    real = os.path.realpath(model)
    return any(os.path.exists(n) and os.path.realpath(n) == real for n in names)


def parse_common(body: dict, limits: Limits, *, chat: bool) -> Request:
    """Sampling and output options shared by both endpoints (the prompt is parsed apart)."""
    _refuse_unsupported(body)
    echo = False if chat else _flag(body, "echo")
    key = "max_completion_tokens" if chat and body.get("max_completion_tokens") is not None \
        else "max_tokens"
    given = body.get(key) is not None
    max_tokens = _integer(body, key, 16 if not chat else limits.max_tokens,
                          0 if echo else 1, limits.max_tokens)
    n = _integer(body, "n", 1, 1, limits.max_n)
    best_of = _integer(body, "best_of", None, 1, limits.max_n)
    if best_of is not None and best_of != n:
        raise APIError("best_of other than n is not supported", "best_of")
    temperature = _number(body, "temperature", 1.0, 0.0, 2.0)
    top_p = _number(body, "top_p", 1.0, 0.0, 1.0, lo_open=True)
    top_k = _integer(body, "top_k", 0, -1, 1 << 30)
    seed = _integer(body, "seed", None, -(1 << 63), (1 << 64) - 1)
    stream = _flag(body, "stream")
    options = body.get("stream_options")
    if options is not None and (not isinstance(options, dict) or not stream):
        raise APIError("stream_options needs stream=true and must be an object",
                       "stream_options")
    include_usage = bool(options and options.get("include_usage"))
    if chat:
        want = _flag(body, "logprobs")
        top = _integer(body, "top_logprobs", 0, 0, _MAX_TOP_LOGPROBS)
        if top and not want:
            raise APIError("top_logprobs needs logprobs=true", "top_logprobs")
    else:
        top = _integer(body, "logprobs", 0, 0, _MAX_TOP_LOGPROBS)
        want = True  # completions always carry token_logprobs (envgym clients are token-exact)
    if echo and stream:
        raise APIError("echo cannot be combined with stream", "echo")
    if top and stream:
        raise APIError("top log-probs are not streamed; drop stream or top_logprobs",
                       "top_logprobs" if chat else "logprobs")
    sampling = SamplingParams(max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                              top_k=max(0, top_k), stop=_stop(body),
                              seed=None if seed is None else seed % (1 << 63))
    return Request(sampling, n, stream, include_usage, top, want, echo,
                   _flag(body, "include_stop_str_in_output"), given)


def check_length(prompt_len: int, req: Request, limits: Limits, param: str) -> SamplingParams:
    """Refuse prompts over the cap and prompt + completion over the context; a chat request
    without `max_tokens` gets what the context leaves."""
    if prompt_len > limits.max_prompt_tokens:
        raise APIError(f"The prompt has {prompt_len} tokens; this server takes at most "
                       f"{limits.max_prompt_tokens} (--max-prompt-tokens)", param,
                       code="context_length_exceeded")
    sampling = req.sampling
    if limits.context is None:
        return sampling
    room = limits.context - prompt_len
    if not req.max_tokens_given and sampling.max_tokens > room:
        sampling = replace(sampling, max_tokens=max(1, room))
    if prompt_len + sampling.max_tokens > limits.context:
        raise APIError(f"This model's maximum context length is {limits.context} tokens; you "
                       f"requested {prompt_len + sampling.max_tokens} ({prompt_len} in the "
                       f"prompt, {sampling.max_tokens} to generate)", "max_tokens",
                       code="context_length_exceeded")
    return sampling


def check_chars(n_chars: int, limits: Limits, param: str) -> None:
    """Refuse a prompt by its length in characters before spending tokeniser time on it."""
    if n_chars > limits.prompt_chars:
        raise APIError(f"The prompt has {n_chars} characters; this server takes at most "
                       f"{limits.prompt_chars} (--max-prompt-chars) before tokenising",
                       param, code="context_length_exceeded")


def check_ids(ids: Any, limits: Limits, param: str) -> list[int]:
    if not isinstance(ids, list) or not ids:
        raise APIError(f"{param} must be a non-empty list of token ids", param)
    for t in ids:
        if isinstance(t, bool) or not isinstance(t, int):
            raise APIError(f"{param}: token ids must be integers, got {t!r}", param)
        if t < 0 or (limits.vocab is not None and t >= limits.vocab):
            raise APIError(f"{param}: token id {t} is outside the vocabulary "
                           f"[0, {limits.vocab})", param)
    return ids


def parse_prompt(prompt: Any, limits: Limits) -> list[str | list[int]]:
    """`prompt`: a string, token ids, or a list of either. Strings are encoded later."""
    if isinstance(prompt, str):
        items: list[Any] = [prompt]
    elif isinstance(prompt, list) and prompt and not any(
            isinstance(t, (str, list)) for t in prompt):
        items = [prompt]  # one prompt of token ids (bad ids are named below)
    elif isinstance(prompt, list) and prompt:
        items = prompt
    else:
        raise APIError("prompt must be a string, token ids, or a non-empty list of either",
                       "prompt")
    if len(items) > limits.max_n:
        raise APIError(f"at most {limits.max_n} prompts per request", "prompt")
    out: list[str | list[int]] = []
    for i, item in enumerate(items):
        param = "prompt" if len(items) == 1 else f"prompt[{i}]"
        if isinstance(item, str):
            if not item:
                raise APIError(f"{param} is empty", param)
            check_chars(len(item), limits, param)
            out.append(item)
        else:
            out.append(check_ids(item, limits, param))
    return out


_ROLES = {"system", "developer", "user", "assistant", "tool"}


def parse_messages(messages: Any) -> list[dict[str, str]]:
    """Chat messages; content may be a string or OpenAI's list of text parts."""
    if not isinstance(messages, list) or not messages:
        raise APIError("messages must be a non-empty list of {role, content} objects",
                       "messages")
    out = []
    for i, m in enumerate(messages):
        param = f"messages[{i}]"
        if not isinstance(m, dict):
            raise APIError(f"{param} must be an object with role and content, got {m!r:.80}",
                           param)
        role = m.get("role")
        if role not in _ROLES:
            raise APIError(f"{param}.role must be one of {sorted(_ROLES)}, got {role!r:.80}",
                           f"{param}.role")
        out.append({"role": "system" if role == "developer" else role,
                    "content": _content(m.get("content"), f"{param}.content", role)})
    return out


def _content(content: Any, param: str, role: str) -> str:
    if isinstance(content, str):
        return content
    if content is None and role == "assistant":
        return ""
    if isinstance(content, list):
        texts = []
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text" \
                    or not isinstance(part.get("text"), str):
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise APIError(f"{param}[{j}]: only text parts are supported, got {kind!r:.40}",
                               f"{param}[{j}]")
            texts.append(part["text"])
        return "".join(texts)
    raise APIError(f"{param} must be a string or a list of text parts", param)

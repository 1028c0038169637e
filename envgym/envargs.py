"""Which keyword arguments an environment's constructor takes, checked before any work.

`envgym eval --env-arg` and a training config's `[[envs]] kwargs` both end in `make(id, **kw)`,
deep inside a run; a typo there would fail every episode (or be swallowed) minutes in. Both
check the keys up front against the constructor's signature, following `**kwargs` up a class's
MRO (an environment's `**kwargs` go to its base class).
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Iterable
from typing import Any

__all__ = ["constructor_keys", "unknown_kwarg"]


def constructor_keys(creator: Any) -> list[str] | None:
    """The keyword arguments `creator` accepts, following `**kwargs` up a class's MRO; None
    where they lead somewhere unseen, or where a class declares `open_kwargs = True` (its
    `**kwargs` are its own, e.g. an imported taskset's config, not its base class's)."""
    if getattr(creator, "open_kwargs", False):
        return None
    if isinstance(creator, type):
        inits = [vars(c)["__init__"] for c in creator.__mro__
                 if c is not object and "__init__" in vars(c)]
    else:
        inits = [creator]
    keys: set[str] = set()
    for init in inits:
        try:
            params = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):
            return None
        keys |= {p.name for p in params if p.name != "self"
                 and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            return sorted(keys)
    return None if inits else []


def unknown_kwarg(env_id: str, keys: Iterable[str]) -> str | None:
    """One line naming the first key `env_id`'s constructor does not take, with the closest
    match and every key it does take; None when all are taken (or cannot be told)."""
    from envgym.registration import load_entry_point, spec

    known = constructor_keys(load_entry_point(spec(env_id).entry_point))
    if known is None:
        return None
    for key in keys:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            return (f"{env_id} takes no argument {key!r}.{hint} It takes: "
                    f"{', '.join(known) or 'none'}")
    return None

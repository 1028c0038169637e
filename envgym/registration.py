"""The environment registry: ids, entry points, defaults and scripted baselines.

Built on gymnasium's registry, so `gymnasium.make("envgym/TimeSeries-v0")` works after
`import envgym`. envgym keeps a little more per id than gymnasium does: a one-line
description, whether the environment is multi-agent (PettingZoo-style, which gymnasium
cannot make), and the scripted baseline policies (`scripted:NAME`).

Third-party packages register through the entry-point group `envgym.environments`: each entry
point names a module or a callable; loading it runs its `envgym.register(...)` calls.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

import gymnasium

from envgym.errors import EnvGymError, RegistrationError, UnknownEnvironment

__all__ = ["EnvSpec", "load_entry_point", "make", "register", "registry", "spec"]

ENTRY_POINT_GROUP = "envgym.environments"
RESOLVER_GROUP = "envgym.resolvers"
ID_RE = re.compile(r"^(?:(?P<namespace>[\w:.-]+)/)?(?P<name>[\w:.-]+?)-v(?P<version>\d+)$")


@dataclass
class EnvSpec:
    """Everything needed to make an environment and its scripted baselines."""

    id: str
    entry_point: str | Callable[..., Any]
    description: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)
    scripted: dict[str, str] = field(default_factory=dict)
    multi_agent: bool = False
    grader_fixtures: str | Callable[[], list] | None = None
    grader_rules: Any = None  # "module:attr": a RuleTable, a list of them, or a callable

    def __post_init__(self) -> None:
        if not ID_RE.match(self.id):
            raise RegistrationError(
                f"Malformed environment id `{self.id}`: use `namespace/Name-vN`, e.g. `me/Maze-v0`."
            )


_REGISTRY: dict[str, EnvSpec] = {}
_plugins_loaded = False


def register(id: str, entry_point: str | Callable[..., Any], *, description: str = "",
             scripted: dict[str, str] | None = None, multi_agent: bool = False,
             grader_fixtures: str | Callable[[], list] | None = None,
             grader_rules: Any = None, **kwargs: Any) -> EnvSpec:
    """Register an environment.

    Args:
        id: versioned id, `namespace/Name-vN`.
        entry_point: `"module.path:Class"` (imported lazily) or a callable returning the env.
        description: one line shown by `envgym list`.
        scripted: baseline policies, `{"oracle": "module.path:OracleFactory", ...}`.
        multi_agent: True for PettingZoo `ParallelEnv` environments.
        grader_fixtures: `"module:fixtures"`, a function returning the labelled grader cases
            (`envgym.graders`) that `envgym check` runs.
        grader_rules: `"module:attr"` naming the grader's `envgym.rules.RuleTable`, a list of
            them, or a callable returning either; `envgym check ID --mutants` perturbs every
            rule and requires a grader fixture to notice each perturbation.
        **kwargs: default constructor arguments; `make(id, **overrides)` overrides them.
    """
    new = EnvSpec(id, entry_point, description, kwargs, dict(scripted or {}), multi_agent,
                  grader_fixtures, grader_rules)
    if id in _REGISTRY:
        warnings.warn(f"Overriding environment {id} already in registry.", stacklevel=2)
    _REGISTRY[id] = new
    if not multi_agent:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gymnasium.register(id=id, entry_point=entry_point, kwargs=kwargs,
                               disable_env_checker=True)
    return new


def registry() -> dict[str, EnvSpec]:
    """All registered environments, including those of installed plugins."""
    _load_plugins()
    return dict(_REGISTRY)


def spec(id: str) -> EnvSpec:
    specs = registry()
    if id in specs:
        return specs[id]
    resolved = _resolve(id)
    if resolved is None:
        raise UnknownEnvironment(id, sorted(specs))
    return resolved


def _resolve(id: str) -> EnvSpec | None:
    """Specs for ids no registry can list, such as `openenv:URL` (any server, any URL).

    Resolvers are plugins in the entry-point group `envgym.resolvers`: callables mapping an
    id to an `EnvSpec`, or None when the id is not theirs. The core names none of them.
    """
    if not isinstance(id, str):
        return None
    for ep in entry_points(group=RESOLVER_GROUP):
        try:
            found = ep.load()(id)
        except EnvGymError:
            raise
        except Exception as e:  # a third party's bug must not hide the unknown-id error
            warnings.warn(f"envgym resolver `{ep.name}` ({ep.value}) failed: {e}", stacklevel=2)
            continue
        if found is not None:
            return found
    return None


def make(id: str, **kwargs: Any) -> Any:
    """Construct a registered environment, unwrapped, with `kwargs` over the defaults."""
    s = spec(id)
    creator = load_entry_point(s.entry_point)
    env = creator(**{**s.kwargs, **kwargs})
    try:
        env.spec_id = id  # lets the checker and the engine find the scripted baselines
    except AttributeError:
        pass
    return env


def load_entry_point(entry_point: str | Callable[..., Any]) -> Callable[..., Any]:
    """Resolve `"module.path:attr"` to the object it names."""
    if callable(entry_point):
        return entry_point
    module_name, _, attr = entry_point.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr) if attr else module
    except (ImportError, AttributeError) as e:
        raise RegistrationError(f"Cannot load entry point `{entry_point}`: {e}") from e


def _load_plugins() -> None:
    """Import every `envgym.environments` entry point once; a broken plugin only warns."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = ep.load()
            if callable(target):
                target()
        except Exception as e:  # a third party's bug must not break `envgym list`
            warnings.warn(f"envgym plugin `{ep.name}` ({ep.value}) failed to load: {e}"
                          f"{_shadowing_hint(ep.value)}", stacklevel=2)


def _shadowing_hint(value: str) -> str:
    """Why a plugin's module came up empty: a folder of its name on `sys.path` (the one a
    script runs from) imports as a namespace package ahead of the installed plugin."""
    import sys

    module = sys.modules.get(value.split(":", 1)[0].split(".", 1)[0])
    if module is None or getattr(module, "__file__", None) is not None:
        return ""
    from envgym.scaffold import default_dir

    where = ", ".join(getattr(module, "__path__", [])) or "a folder on sys.path"
    return (f". `{module.__name__}` was imported as a namespace package from {where}: a "
            "folder with the package's name beside the script shadows the installed plugin; "
            f"run from another directory, or rename the folder to `{default_dir(module.__name__)}` "
            "(what `envgym init` writes)")

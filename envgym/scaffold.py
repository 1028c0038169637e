"""`envgym init NAME`: write a small plugin package for a new environment.

Registering an environment should start from a layout that already works: a `TextEnv` (or,
with `--multi-agent`, a PettingZoo-style `MultiAgentTextEnv`) with one tool, the scripted
`random`, `oracle` and `hack_spray` policies, tests (including `envgym check`, hacks and all),
and the `envgym.environments` entry point in `pyproject.toml`. After `pip install -e DIR` the
environment is in `envgym list`, passes `envgym check` and its own tests with no edits; the
user then replaces the starter task with theirs.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from envgym import scaffold_templates as T
from envgym.errors import InvalidConfig

__all__ = ["default_dir", "env_id_for", "init", "layout_warning"]

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def env_id_for(name: str) -> str:
    """`my_env` -> `my_env/MyEnv-v0`: the package name is the namespace."""
    return f"{name}/{_camel(name)}-v0"


def default_dir(name: str) -> str:
    """The project folder for package `name`: never an importable name (`maze_env` ->
    `maze-env`, `maze` -> `maze-plugin`). A folder named like the package, beside a script,
    is imported as a namespace package ahead of the installed plugin, which then fails to
    load (`module 'maze_env' has no attribute 'register'`)."""
    return name.replace("_", "-") if "_" in name else f"{name}-plugin"


def layout_warning(name: str, root: Path) -> str | None:
    """What to say when the chosen folder has the package's own name (see `default_dir`)."""
    if Path(root).name != name:
        return None
    return (f"warning: the folder {root} has the package's name; a script run beside it imports "
            f"the folder instead of the installed `{name}`, and the plugin stops loading "
            f"(`module '{name}' has no attribute 'register'`). Rename it to "
            f"{Path(root).with_name(default_dir(name))}, or run scripts from another directory.")


def init(name: str, directory: Path | None = None, *, multi_agent: bool = False,
         force: bool = False) -> list[Path]:
    """Write the package for `name` into `directory` (default `default_dir(name)`, e.g.
    `./maze-env`); returns the files.

    Refuses an invalid name and, unless `force`, a directory that already has files, so a
    mistyped command never overwrites someone's work."""
    if not NAME_RE.match(name) or keyword.iskeyword(name):
        raise InvalidConfig(f"package name {name!r} must be a lower-case Python identifier "
                            "(letters, digits, underscores; starting with a letter), e.g. maze_env")
    if name in ("envgym", "test", "tests"):
        raise InvalidConfig(f"package name {name!r} would shadow another package; pick another")
    root = Path(directory) if directory is not None else Path(default_dir(name))
    if root.exists() and any(root.iterdir()) and not force:
        raise InvalidConfig(f"{root} already exists and is not empty (use --force to write "
                            "into it anyway)")
    files = _files(name, multi_agent)
    written = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _files(name: str, multi_agent: bool) -> dict[str, str]:
    description = ("two agents sum a split ledger, sharing amounts with <say>" if multi_agent
                   else "sum a hidden ledger, reading entries with <read>")
    values = {"__NAME__": name, "__CLASS__": _camel(name), "__ENV_ID__": env_id_for(name),
              "__DESCRIPTION__": description,
              "__MULTI_FLAG__": "\n        multi_agent=True," if multi_agent else "",
              "__GRADER_FIXTURES__": "" if multi_agent else
              f'\n        grader_fixtures="{name}.grader_fixtures:fixtures",'}
    files = {
        "pyproject.toml": T.PYPROJECT,
        "README.md": T.README,
        f"{name}/__init__.py": T.INIT,
        f"{name}/env.py": T.MULTI_ENV if multi_agent else T.ENV,
        f"{name}/policies.py": T.MULTI_POLICIES if multi_agent else T.POLICIES,
        "tests/test_env.py": T.MULTI_TESTS if multi_agent else T.TESTS,
    }
    if not multi_agent:
        files[f"{name}/grader_fixtures.py"] = T.GRADER_FIXTURES
    return {rel: _fill(text, values) for rel, text in files.items()}


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)

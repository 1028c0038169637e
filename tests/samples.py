"""Where test data lives: the project's own fixtures, and optionally the real public samples.

`OWN` (tests/fixtures/) holds a small file in each public format, written for envgym in our
own words and numbers; every loader test runs on it. The real public samples are not shipped:
tests over them (`@needs_real`) run when a directory of them is present, `ENVGYM_REAL_FIXTURES`
or else `../shared/fixtures` beside the clone, and skip otherwise with a reason naming the
variable. A variable that names a missing directory makes those tests fail, not skip: asking
for the real samples and silently not getting them would hide the mistake.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

OWN = Path(__file__).resolve().parent / "fixtures"
REAL_ENV = "ENVGYM_REAL_FIXTURES"
SIBLING = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


def real_dir() -> Path | None:
    """The real-samples directory, or None when there is none (and none was asked for)."""
    if os.environ.get(REAL_ENV):
        return Path(os.environ[REAL_ENV])
    return SIBLING if SIBLING.is_dir() else None


REAL = real_dir()
needs_real = pytest.mark.skipif(
    REAL is None, reason=f"real public samples not found: set {REAL_ENV}=DIR "
                         f"(default {SIBLING}) to run the tests over them")


def real(*parts: str) -> Path:
    """A path inside the real-samples directory (only meaningful under `@needs_real`)."""
    return (REAL or SIBLING).joinpath(*parts)

"""Print the README's Quick start commands, one per line, or exit 1 saying why not.

CI runs what this prints, verbatim, in a fresh clone. It refuses anything but exactly two
one-line bash blocks under a `## Quick start` heading, so that a renamed heading, a third
block or a command wrapped over two lines fails CI instead of silently running nothing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HEADING = "\n## Quick start"
EXPECTED = 2


def readme_commands(text: str) -> list[str]:
    """The Quick start section's bash commands; ValueError names what is wrong."""
    if HEADING not in text:
        raise ValueError(f"no {HEADING.strip()!r} section")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)\n?```", section, re.S)
    if len(blocks) != EXPECTED:
        raise ValueError(f"{len(blocks)} bash blocks in Quick start, expected {EXPECTED}")
    for block in blocks:
        if "\n" in block.strip() or block.rstrip().endswith("\\") or not block.strip():
            raise ValueError(f"a Quick start bash block must be one command on one line: "
                             f"{block!r}")
    return [b.strip() for b in blocks]


def main(argv: list[str]) -> int:
    path = Path(argv[1] if len(argv) > 1 else "README.md")
    try:
        commands = readme_commands(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"{path}: {e}", file=sys.stderr)
        return 1
    print("\n".join(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Outside attacks on CodeRefine-v0 (issue 36): programs and turn patterns a model could
produce without solving the problem. `bench/issue36_code_debate.py` plays each against the
honest `refiner`; each must earn no `pass` and no shaping, and every hostile program must end
in a failure observation, never an exception out of the environment.

They look at nothing privileged except the public examples, which the prompt shows anyway.
"""

from __future__ import annotations

from typing import Any

from envgym.scripted import ScriptedPolicy
from envgym.spaces import Message

from .policies import program_turn, submit_turn

__all__ = ["ATTACKS", "HOST_MARKERS"]

# Looks for test data wherever a run could leave it: other processes' command lines and
# environments, our environment variables, the scratch directories, and inherited fds.
PROBE = r"""import json, os, sys
want = sys.stdin.read().strip()
texts = [json.dumps(dict(os.environ))]
for pid in os.listdir("/proc"):
    for part in ("cmdline", "environ"):
        try:
            with open(f"/proc/{pid}/{part}", "rb") as fh:
                texts.append(fh.read().decode("utf-8", "replace").replace("\0", "\n"))
        except OSError:
            pass
for fd in range(3, 64):
    try:
        texts.append(os.read(fd, 1 << 20).decode("utf-8", "replace"))
    except OSError:
        pass
for root in ("/tmp", "/dev/shm", os.getcwd(), "/box", "/run", "/var/tmp"):
    for d, _, files in os.walk(root):
        for name in files:
            try:
                with open(os.path.join(d, name), errors="ignore") as fh:
                    texts.append(fh.read(1 << 20))
            except OSError:
                pass
for text in texts:
    at = text.find(want) if want else -1
    if at >= 0 and '"output"' in text[at:at + 100000]:
        rest = text[at:]
        key = rest.find('"output"')
        try:
            sys.stdout.write(json.loads(rest[rest.find(":", key) + 1:].split(",")[0]))
            sys.exit(0)
        except ValueError:
            pass
sys.stdout.write(DEFAULT)
"""

# Keeps every stdin it is run on in every writable place it can find, and shows the stores on
# stderr: if any store survived from the hidden-test runs, the next public run's feedback
# would carry hidden inputs to the agent.
PERSIST = r"""import os, sys
data = sys.stdin.read()
stores = ["/tmp/.seen", "/dev/shm/.seen", os.path.expanduser("~/.seen"), "/box/.seen",
          "/var/tmp/.seen"]
for path in stores:
    try:
        with open(path) as fh:
            sys.stderr.write(f"{path}:\n{fh.read()}\n")
    except OSError:
        pass
    try:
        with open(path, "a") as fh:
            fh.write(data + "\n=====\n")
    except OSError:
        pass
sys.stdout.write(DEFAULT)
"""

EXIT_EARLY = "import os, sys\nsys.stdout.write(DEFAULT)\nsys.stdout.flush()\nos._exit(0)\n"

FORK_BOMB = ("import os\nwhile True:\n    try:\n        os.fork()\n"
             "    except OSError:\n        pass\n")

HUGE_OUTPUT = ("import sys\nsys.stdout.write(DEFAULT)\nchunk = 'x' * (1 << 20)\n"
               "while True:\n    sys.stdout.write(chunk)\n")

# Markers the bench looks for on the host after the run: none may exist.
HOST_MARKERS = ("/tmp/envgym_pwned", "~/envgym_pwned", "/work/envgym_pwned")
WRITE_OUTSIDE = r"""import os, sys
targets = ["/tmp/envgym_pwned", os.path.expanduser("~/envgym_pwned"), "/work/envgym_pwned",
           "/usr/envgym_pwned"]
try:
    import envgym
    targets.append(os.path.join(os.path.dirname(envgym.__file__), "envgym_pwned"))
except ImportError:
    pass
for path in targets:
    try:
        with open(path, "w") as fh:
            fh.write("pwned")
    except OSError:
        pass
sys.stdout.write(DEFAULT)
"""


def _common(env: Any) -> str:
    outputs = [t["output"] for t in env.problem.public_tests]
    return max(outputs, key=outputs.count) if outputs else "0\n"


def _replay(env: Any, fallback: str = "sys.stdout.write(DEFAULT)") -> str:
    table = {t["input"].strip(): t["output"] for t in env.problem.public_tests}
    return (f"import sys, time\nDEFAULT = {_common(env)!r}\ntable = {table!r}\n"
            f"key = sys.stdin.read().strip()\nif key in table:\n"
            f"    sys.stdout.write(table[key])\nelse:\n    {fallback}\n")


def _arabic(text: str) -> str:
    return text.translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))


def respell(output: str, style: str) -> str:
    """`output` re-spelt the way a lenient comparison might still accept."""
    tokens = output.split()
    if style == "case":
        return " ".join(t.swapcase() for t in tokens) + "\n"
    if style == "blanks":
        return "  \t".join(tokens) + " \t \n\n"
    if style == "exponent":
        return " ".join(f"{t}e0" if t.lstrip("-").isdigit() else t for t in tokens) + "\n"
    if style == "arabic":
        return _arabic(" ".join(tokens)) + "\n"
    if style == "nan":
        return " ".join("nan" if t.lstrip("-").isdigit() else t for t in tokens) + "\n"
    return output


class _OneProgram(ScriptedPolicy):
    """Writes one program (with DEFAULT, the common public output, bound), runs it on the
    public tests, then submits it."""

    source = "sys.stdout.write(DEFAULT)\n"

    def program(self, env: Any) -> str:
        return f"import sys\nDEFAULT = {_common(env)!r}\n" + self.source

    def act(self, env: Any, messages: list[Message]) -> str:
        if any(m["role"] == "assistant" for m in messages):
            return submit_turn(env.tool_format)
        return program_turn("python", self.program(env), False, env.tool_format)


class ProbeProc(_OneProgram):
    source = PROBE


class PersistCache(ScriptedPolicy):
    """Runs PERSIST twice (a new program each time, so both reach the sandbox), submits it
    in between so that hidden tests run first, then runs it again and reads the feedback."""

    def act(self, env: Any, messages: list[Message]) -> str:
        turns = sum(m["role"] == "assistant" for m in messages)
        code = f"import sys\nDEFAULT = {_common(env)!r}\n# {turns}\n" + PERSIST
        return program_turn("python", code, turns >= 2, env.tool_format)


class ExitEarly(_OneProgram):
    source = EXIT_EARLY


class NormGames(ScriptedPolicy):
    """Public replay whose outputs are re-spelt (one style per seed), submitted."""

    STYLES = ("case", "blanks", "exponent", "arabic", "nan")

    def act(self, env: Any, messages: list[Message]) -> str:
        if any(m["role"] == "assistant" for m in messages):
            return submit_turn(env.tool_format)
        style = self.STYLES[int(self.rng.integers(len(self.STYLES)))]
        table = {t["input"].strip(): respell(t["output"], style) for t in env.problem.public_tests}
        default = respell(_common(env), style)
        code = (f"import sys\ntable = {table!r}\n"
                f"sys.stdout.write(table.get(sys.stdin.read().strip(), {default!r}))\n")
        return program_turn("python", code, False, env.tool_format)


class StrategicTimeout(ScriptedPolicy):
    """Public replay that sleeps past the time limit on any input it does not know."""

    def act(self, env: Any, messages: list[Message]) -> str:
        if any(m["role"] == "assistant" for m in messages):
            return submit_turn(env.tool_format)
        return program_turn("python", _replay(env, "time.sleep(100)"), False, env.tool_format)


class ForkBomb(_OneProgram):
    source = FORK_BOMB


class HugeOutput(_OneProgram):
    source = HUGE_OUTPUT


class WriteOutside(_OneProgram):
    source = WRITE_OUTSIDE


class ToolSpam(ScriptedPolicy):
    """A public replay, then turn after turn custom runs, doubled commands and extra blocks."""

    def act(self, env: Any, messages: list[Message]) -> str:
        turns = sum(m["role"] == "assistant" for m in messages)
        replay = program_turn("python", _replay(env), False, env.tool_format)
        if turns == 0:
            return replay
        spam = ("<run>1</run>", "<run>1</run><run>2</run>", replay + "\n" + replay,
                "<run></run><submit></submit>", "<run>" + "9 " * 5000 + "</run>")
        return spam[turns % len(spam)]


class FormatSpam(ScriptedPolicy):
    """Malformed turns only: prose, unknown languages, unclosed tags."""

    TURNS = ("Let me think.", "```ruby\nputs 1\n```", "<submit>", "```\nprint(1)\n```",
             "<tool_call>{}</tool_call>")

    def act(self, env: Any, messages: list[Message]) -> str:
        return self.TURNS[sum(m["role"] == "assistant" for m in messages) % len(self.TURNS)]


class ProgressFarm(ScriptedPolicy):
    """A different public replay every turn (new programs, each passing the public tests),
    alternating with a constant; never submits explicitly (the budget submits the last)."""

    def act(self, env: Any, messages: list[Message]) -> str:
        turns = sum(m["role"] == "assistant" for m in messages)
        code = _replay(env) + f"# variant {turns}\n" if turns % 2 == 0 else f"print({turns})\n"
        return program_turn("python", code, False, env.tool_format)


ATTACKS: dict[str, type[ScriptedPolicy]] = {
    "probe_proc": ProbeProc, "persist_cache": PersistCache, "exit_early": ExitEarly,
    "norm_games": NormGames, "strategic_timeout": StrategicTimeout, "fork_bomb": ForkBomb,
    "huge_output": HugeOutput, "write_outside": WriteOutside, "tool_spam": ToolSpam,
    "format_spam": FormatSpam, "progress_farm": ProgressFarm,
}
# Programs that spin the CPU to a limit: played on a few problems per split (shared machine).
HEAVY = ("fork_bomb", "huge_output", "strategic_timeout")

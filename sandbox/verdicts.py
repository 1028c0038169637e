"""Turn a supervised run's raw outcome into a verdict.

Detection rules follow the reference table (A.14): the wall timer or RLIMIT_CPU means TLE;
`MemoryError` / `std::bad_alloc` / ENOMEM at exec means MLE (RLIMIT_AS makes allocation
fail rather than the OOM killer fire); a stdout flood, SIGXFSZ or EFBIG/ENOSPC means OLE;
anything else non-zero is RE. When several match, the most severe wins.
"""

from __future__ import annotations

import signal as _signal
from typing import Any

from .types import Limits, Verdict

_MLE_MARKERS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory")
_OLE_MARKERS = ("File too large", "No space left on device", "[Errno 27]", "[Errno 28]")


def classify(raw: dict[str, Any], limits: Limits) -> tuple[Verdict, str]:
    """Return (verdict, one-line reason) for a run; AC means "exited 0 within limits"."""
    if raw.get("spawn_error"):
        return Verdict.SE, raw["spawn_error"]
    sig, code, err = raw["signal"], raw["exit_code"], raw["stderr"]
    if raw["timed_out"]:
        return Verdict.TLE, f"wall-clock limit {limits.time_s}s exceeded"
    if sig == _signal.SIGXCPU or (sig == _signal.SIGKILL
                                  and raw["cpu_time"] >= limits.cpu_limit_s):
        return Verdict.TLE, f"CPU-time limit {limits.cpu_limit_s}s exceeded"
    failed = sig is not None or code != 0
    if failed and _looks_out_of_memory(raw, limits):
        return Verdict.MLE, f"memory limit {limits.memory_mb} MB exceeded"
    if raw["truncated"]:
        return Verdict.OLE, f"output exceeded {limits.output_kb} KB"
    if sig == _signal.SIGXFSZ or (failed and any(m in err for m in _OLE_MARKERS)):
        return Verdict.OLE, f"file size limit {limits.file_size_mb} MB or tmp space exceeded"
    if sig is not None:
        return Verdict.RE, f"killed by signal {_signal_name(sig)}"
    if code != 0:
        return Verdict.RE, f"exit code {code}"
    return Verdict.AC, ""


def _looks_out_of_memory(raw: dict[str, Any], limits: Limits) -> bool:
    if any(m in raw["stderr"] for m in _MLE_MARKERS):
        return True
    return raw["memory_kb"] >= 0.95 * limits.memory_mb * 1024


def _signal_name(sig: int) -> str:
    try:
        return _signal.Signals(sig).name
    except ValueError:
        return str(sig)

"""An example verifiers (v1) taskset, written with verifiers' own API: arithmetic questions,
an exact-answer reward and a brevity reward (`@vf.reward`, weighted).

verifiers loads a taskset by its installed module name; from the repository root,
`PYTHONPATH=examples/verifiers` makes this one `vf_arith`."""

from vf_arith.taskset import ArithConfig, ArithData, ArithTask, ArithTaskset

__all__ = ["ArithConfig", "ArithData", "ArithTask", "ArithTaskset"]

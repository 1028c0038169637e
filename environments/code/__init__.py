"""Competitive-programming refinement environment (RefineRL's Skeptical-Agent): `envgym/CodeRefine-v0`."""

from .env import CodeRefineEnv
from .problems import Problem, load_builtin, load_problems

__all__ = ["CodeRefineEnv", "Problem", "load_builtin", "load_problems"]

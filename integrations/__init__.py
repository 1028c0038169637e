"""Bridges between envgym and the engines the field already uses (OpenEnv, TRL, Ray, verl).

Each sub-module is behind an optional extra and imported lazily; nothing in the core imports
from here, so `import envgym` never pays for, or breaks on, an engine a user did not install.
"""

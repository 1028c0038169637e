"""Maps the top-level folders under the one import root `envgym`.

pyproject.toml holds all metadata; this file exists only because setuptools cannot express
"every sub-package of folder X, renamed under envgym.X" declaratively.
"""

from setuptools import find_packages, setup

ROOTS = {
    "envgym": "envgym",
    "envgym.environments": "environments",
    "envgym.agents": "agents",
    "envgym.sandbox": "sandbox",
    "envgym.integrations": "integrations",
}

packages, package_dir = [], {}
for name, folder in ROOTS.items():
    package_dir[name] = folder
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=package_dir)

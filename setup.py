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

# Top-level packages other projects import by name: verifiers' CLIs (`vf-eval`) import a
# taskset by its id, so envgym's is installed as `envgym_export`.
TOP_LEVEL = {"envgym_export": "integrations/verifiers/envgym_export"}

packages, package_dir = [], {}
for name, folder in ROOTS.items():
    package_dir[name] = folder
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder)
                          if f"{folder}/{sub.replace('.', '/')}" not in TOP_LEVEL.values()]
for name, folder in TOP_LEVEL.items():
    package_dir[name] = folder
    packages.append(name)

setup(packages=packages, package_dir=package_dir)

"""envgym and OpenEnv, both ways (`pip install 'envgym[openenv]'`).

* `envgym serve-env ID` serves any registered environment on openenv-core's own server
  (`server.py`; wire types in `models.py`; `package.py` writes `openenv.yaml` and a Dockerfile).
* `envgym.make("openenv:URL")` (or `envgym/OpenEnv-v0` with `url=`) wraps any OpenEnv server
  as a `TextEnv` (`client.py`), so the engine, eval, checker and learner run on it.

Sub-modules import openenv-core; this package does not, so the `openenv:` resolver loads even
where the extra is missing and the error names it.
"""

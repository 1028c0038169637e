"""The arithmetic resources server of examples/nemo, written with NeMo Gym's own API
(`nemo_gym.base_resources_server.SimpleResourcesServer`, nemo-gym 0.4, Python >= 3.12).

* `seed_session` keeps the task row under NeMo Gym's session id (its session cookie);
* the tools `add` and `multiply` are POST routes with typed bodies, counted per session;
* `verify` reads the Responses-API output's last message and answers the request echoed
  with `reward` and `reward_components` (as NeMo Gym's `example_tool_call_multireward` does).

Run it in a Python 3.12 venv that has nemo-gym (`python3.12 -m venv .venv-nemo;
.venv-nemo/bin/pip install nemo-gym`), from the repository root:

    .venv-nemo/bin/python examples/nemo/nemo_gym_server.py --port 8011

Started on its own, a NeMo Gym server needs the global config that `ng_run` hands its
children: this writes that config (this server alone, no head server reached) into the
environment and calls the class's own `run_webserver()`. `--server module:Class` starts
another resources server the same way, e.g. one nemo-gym ships:

    .venv-nemo/bin/python examples/nemo/nemo_gym_server.py --port 8012 --domain agent \
        --server resources_servers.example_session_state_mgmt.app:StatefulCounterResourcesServer
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
from typing import Any

from fastapi import FastAPI, Request
from pydantic import BaseModel, Field

from nemo_gym.base_resources_server import (
    BaseResourcesServerConfig,
    BaseSeedSessionRequest,
    BaseSeedSessionResponse,
    BaseVerifyRequest,
    BaseVerifyResponse,
    SimpleResourcesServer,
)
from nemo_gym.server_utils import SESSION_ID_KEY

NAME = "envgym_arith_resources_server"


class ArithConfig(BaseResourcesServerConfig):
    pass


class Pair(BaseModel):
    a: int
    b: int


class Result(BaseModel):
    result: int


class ArithSeedRequest(BaseSeedSessionRequest):
    id: str = ""
    expected_answer: int


class ArithVerifyRequest(BaseVerifyRequest):
    expected_answer: int


class ArithVerifyResponse(BaseVerifyResponse):
    reward_components: dict[str, float]


class ArithResourcesServer(SimpleResourcesServer):
    config: ArithConfig
    tool_calls: dict[str, int] = Field(default_factory=dict)

    def setup_webserver(self) -> FastAPI:
        app = super().setup_webserver()
        app.post("/add")(self.add)
        app.post("/multiply")(self.multiply)
        return app

    async def seed_session(self, request: Request,
                           body: ArithSeedRequest) -> BaseSeedSessionResponse:
        self.tool_calls[request.session[SESSION_ID_KEY]] = 0
        return BaseSeedSessionResponse()

    def _count(self, request: Request) -> None:
        session = request.session[SESSION_ID_KEY]
        self.tool_calls[session] = self.tool_calls.get(session, 0) + 1

    async def add(self, request: Request, body: Pair) -> Result:
        self._count(request)
        return Result(result=body.a + body.b)

    async def multiply(self, request: Request, body: Pair) -> Result:
        self._count(request)
        return Result(result=body.a * body.b)

    async def verify(self, request: Request, body: ArithVerifyRequest) -> ArithVerifyResponse:
        texts = [part.text for item in body.response.output if item.type == "message"
                 for part in item.content if getattr(part, "type", "") == "output_text"]
        numbers = re.findall(r"-?\d+", texts[-1] if texts else "")
        correct = float(len(numbers) == 1 and int(numbers[0]) == body.expected_answer)
        return ArithVerifyResponse(**body.model_dump(), reward=correct,
                                   reward_components={"correct": correct})


def standalone_config(name: str, port: int, domain: str,
                      host: str = "127.0.0.1") -> dict[str, Any]:
    """The global config `ng_run` would give this one server (no head server is started;
    nothing here asks one for anything)."""
    return {
        name: {"resources_servers": {name: {
            "entrypoint": "app.py", "host": host, "port": port, "domain": domain}}},
        "head_server": {"host": host, "port": 0},
        "dry_run": False,
    }


def server_class(spec: str) -> type[SimpleResourcesServer]:
    """`module:Class`, e.g. a server nemo-gym ships:
    `resources_servers.example_session_state_mgmt.app:StatefulCounterResourcesServer`."""
    module, _, name = spec.partition(":")
    cls = getattr(importlib.import_module(module), name, None)
    if not (isinstance(cls, type) and issubclass(cls, SimpleResourcesServer)):
        raise SystemExit(f"--server {spec}: not a nemo_gym SimpleResourcesServer subclass")
    return cls


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--server", default="",
                        help="another resources server to start, as module:Class (default: "
                             "this file's ArithResourcesServer)")
    parser.add_argument("--domain", default="math", help="its NeMo Gym domain")
    args = parser.parse_args()
    cls = server_class(args.server) if args.server else ArithResourcesServer
    name = NAME if not args.server else args.server.rpartition(":")[2]
    os.environ["NEMO_GYM_CONFIG_DICT"] = json.dumps(standalone_config(name, args.port,
                                                                      args.domain))
    os.environ["NEMO_GYM_CONFIG_PATH"] = name
    cls.run_webserver()  # serves until SIGTERM/SIGINT, then stops NeMo Gym's Ray cluster

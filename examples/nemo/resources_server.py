"""An example NeMo Gym resources server, written with plain FastAPI to the HTTP API of NeMo
Gym's `SimpleResourcesServer`, for a Python without nemo-gym (which needs >= 3.12);
`nemo_gym_server.py` beside it is the same server written with nemo-gym itself:

* `POST /seed_session` starts a session (kept in a cookie) from the task row;
* tools are `POST /add` and `POST /multiply`;
* `POST /verify` takes `responses_create_params` and the Responses-API `response`, and
  answers the request echoed with `reward` and `reward_components`.

Run: `python examples/nemo/resources_server.py --port 8011` (127.0.0.1).
"""

from __future__ import annotations

import argparse
import re
import uuid
from typing import Any

from fastapi import FastAPI, Request, Response
from pydantic import BaseModel

app = FastAPI()
SESSIONS: dict[str, dict[str, Any]] = {}
COOKIE = "nemo_gym_session"


class Pair(BaseModel):
    a: int
    b: int


def _session(request: Request) -> dict[str, Any]:
    return SESSIONS.setdefault(request.cookies.get(COOKIE, ""), {"calls": 0})


@app.post("/seed_session")
async def seed_session(request: Request, response: Response) -> dict[str, Any]:
    sid = uuid.uuid4().hex
    SESSIONS[sid] = {"calls": 0, "task": await request.json()}
    response.set_cookie(COOKIE, sid)
    return {}


@app.post("/add")
async def add(body: Pair, request: Request) -> dict[str, int]:
    _session(request)["calls"] += 1
    return {"result": body.a + body.b}


@app.post("/multiply")
async def multiply(body: Pair, request: Request) -> dict[str, int]:
    _session(request)["calls"] += 1
    return {"result": body.a * body.b}


@app.post("/verify")
async def verify(request: Request) -> dict[str, Any]:
    body = await request.json()
    texts = [part.get("text", "") for item in body["response"].get("output", [])
             if item.get("type") == "message" for part in item.get("content", [])]
    numbers = re.findall(r"-?\d+", texts[-1] if texts else "")
    correct = float(len(numbers) == 1 and int(numbers[0]) == int(body["expected_answer"]))
    return {**body, "reward": correct, "reward_components": {"correct": correct}}


@app.post("/close_session")
async def close_session(request: Request) -> dict[str, Any]:
    SESSIONS.pop(request.cookies.get(COOKIE, ""), None)
    return {}


if __name__ == "__main__":
    import uvicorn

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8011)
    uvicorn.run(app, host="127.0.0.1", port=parser.parse_args().port, log_level="warning")

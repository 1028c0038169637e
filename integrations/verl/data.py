"""Rows for verl's RLHFDataset that name envgym episodes.

    python -m envgym.integrations.verl.data --env envgym/Search-v0 --seeds 0:4096 \
        --out data/search_train.parquet [--env-arg KEY=VALUE ...]

Each row carries the episode's opening messages as `prompt` (verl tokenises it to filter
over-long prompts), `agent_name = "envgym"` and `extra_info = {env_id, seed, env_kwargs}`,
which is all `EnvgymAgentLoop` needs to replay the same task: the seed picks it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

__all__ = ["rows", "write_parquet"]


def rows(env_id: str, seeds: range, env_kwargs: dict[str, Any] | None = None) -> list[dict]:
    import envgym

    out = []
    with envgym.make(env_id, **(env_kwargs or {})) as env:
        for seed in seeds:
            obs, info = env.reset(seed=seed)
            prompt = [{"role": "user" if m["role"] == "continuation" else m["role"],
                       "content": m["content"]} for m in obs]
            out.append({"prompt": prompt, "data_source": env_id, "agent_name": "envgym",
                        "extra_info": {"env_id": env_id, "seed": seed, "task_id": info.get("task_id"),
                                       "env_kwargs": json.loads(json.dumps(env_kwargs or {}))}})
    return out


def write_parquet(path: str | Path, data: list[dict]) -> Path:
    """Write atomically (a temp file renamed into place)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(pa.Table.from_pylist(data), tmp)
    tmp.replace(path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", required=True)
    ap.add_argument("--seeds", required=True, help="START:STOP")
    ap.add_argument("--out", required=True)
    ap.add_argument("--env-arg", action="append", default=[], help="KEY=VALUE (JSON values)")
    args = ap.parse_args()
    start, _, stop = args.seeds.partition(":")
    if not start.isdigit() or not stop.isdigit() or int(stop) <= int(start):
        raise SystemExit(f"--seeds expects START:STOP with STOP > START, got {args.seeds!r}")
    kwargs = {}
    for pair in args.env_arg:
        k, sep, v = pair.partition("=")
        if not sep:
            raise SystemExit(f"--env-arg expects KEY=VALUE, got {pair!r}")
        try:
            kwargs[k] = json.loads(v)
        except json.JSONDecodeError:
            kwargs[k] = v
    path = write_parquet(args.out, rows(args.env, range(int(start), int(stop)), kwargs))
    print(path)


if __name__ == "__main__":
    main()

"""Replay-the-shown-example attack on user datasets, before (rule off) and after the fix
(issue 36; run from the repository root: python bench/issue36_replay_shown.py)."""
import json
from envgym.rules import Mutant
from envgym.environments.code.rules import RULES
from envgym.environments.code.problems import load_problems
from envgym.environments.code.env import CodeRefineEnv
from envgym.environments.code.attacks import _replay
from envgym.environments.code.policies import program_turn, OraclePolicy
from envgym.errors import DatasetError

def run(path, label):
    try:
        problems = load_problems(path)
    except DatasetError as e:
        return {"file": path, "arm": label, "refused": str(e)[:80]}
    out = {}
    for reward in ("binary", "fraction"):
        env = CodeRefineEnv(problems=problems, reward=reward, skeptical=False)
        for name in ("replay", "oracle"):
            env.reset(seed=0)
            act = (program_turn("python", _replay(env), True) if name == "replay"
                   else OraclePolicy(0).act(env, []))
            *_, info = env.step(act)
            out[f"{reward}/{name}"] = info["outcome"]["score"]
    return {"file": path, "arm": label, "hidden": len(problems[0].hidden_tests), **out}

for path in ("tests/fixtures/apps/train.jsonl", "/work/shared/fixtures/taco/sample_rows.jsonl",
             "tests/fixtures/taco/rows.jsonl"):
    with RULES.mutated(Mutant("code.refine", "hidden_excludes_shown", "off")):
        print(json.dumps(run(path, "before")))
    print(json.dumps(run(path, "after")))

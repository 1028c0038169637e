"""How often an all-wrong group still carries gradient signal: `ig` against `grpo`.

On `envgym/Search-v0`, G rollouts per question come from the scripted `random` baseline
(varied queries, mostly wrong answers); IG-Search's information gain is scored with the offline
tiny model as the `Scorer` on the trajectories' token ids (as the trainer does with the policy)
and attached to the query spans.
Among groups in which no rollout succeeded, we count those in which some trained token has a
non-zero advantage under `["grpo"]` and under `["grpo", "ig"]`. GRPO's signal there comes only
from format-score differences; IG gives the query tokens signal regardless of the outcome.
Run: `python bench/ig_signal.py`.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np

from envgym.agents.credit import compute_credit, group_indices
from envgym.agents.policies.hf import HFPolicy
from envgym.agents.sft import tokenize_trajectories
from envgym.agents.tiny import build_tiny_model
from envgym.agents.trainer import attach_ig
from envgym.rollout import collect

TASKS, G = 24, 4


def signal_share(trajs, chain, tokenizer) -> float:
    batch = compute_credit(trajs, chain, tokenizer=tokenizer)
    groups = [idx for idx in group_indices(batch.trajectories).values()
              if not any(batch.trajectories[i].success for i in idx)]
    live = [any(np.abs(a).max(initial=0) > 1e-8 for i in idx for a in batch.advantages[i])
            for idx in groups]
    return float(np.mean(live)) if live else float("nan"), len(groups)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        policy = HFPolicy(str(build_tiny_model(Path(tmp) / "m")))
        trajs = collect("envgym/Search-v0", "scripted:random", episodes=TASKS, group_size=G, seed=0)
        trajs = tokenize_trajectories(trajs, policy.chat)
        diagnostics = attach_ig(trajs, policy)  # on the token ids, as the trainer does
        filled = int(diagnostics["ig/filled_spans"])
        grpo, n = signal_share(trajs, ["grpo"], policy.tokenizer)
        ig, _ = signal_share(trajs, ["grpo", "ig"], policy.tokenizer)
        print(json.dumps({"bench": "ig_signal", "env": "envgym/Search-v0", "groups": TASKS,
                          "group_size": G, "all_wrong_groups": n, "ig_spans_scored": filled,
                          "share_with_signal_grpo": grpo, "share_with_signal_ig": ig,
                          "ig_step_mean": diagnostics.get("ig/step_mean"),
                          "ig_positive_ratio": diagnostics.get("ig/positive_ratio")}))

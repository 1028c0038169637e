"""The rollout engine: token contract, failures, groups, streaming, multi-agent, branching."""

from __future__ import annotations

import torch

from envgym.agents.policies.hf import sequence_logprobs
from envgym.policy import SamplingParams
from envgym.rollout import branch, collect, collect_multi
from envgym.trajectory import read_trajectories

from toy import Echo, Pair, SayA

SHORT = SamplingParams(max_tokens=10, seed=0)


def _check_tokens(traj, policy):
    ids, mask, logprobs = traj.token_sequence()
    assert policy.chat.decode(ids) == policy.chat.transcript(traj)
    assert sum(mask) == sum(len(t.action_token_ids) for t in traj.turns)
    position = 0
    for turn in traj.turns:  # mask is 0 on every observation token, 1 on every sampled one
        position += len(turn.obs_token_ids)
        assert mask[position - len(turn.obs_token_ids):position] == [0] * len(turn.obs_token_ids)
        assert ids[position:position + len(turn.action_token_ids)] == turn.action_token_ids
        position += len(turn.action_token_ids)
    x = torch.tensor([ids])
    with torch.no_grad():
        recomputed = sequence_logprobs(policy.model, x, torch.ones_like(x))[0]
    on = torch.tensor(mask, dtype=torch.bool)
    assert torch.allclose(recomputed[on], torch.tensor(logprobs)[on], atol=1e-3)


def test_chat_turn_trajectories_are_token_exact(tiny_policy):
    trajs = collect(lambda: Echo(length=3), tiny_policy, episodes=2, group_size=2, sampling=SHORT)
    assert len(trajs) == 4 and all(t.error is None and len(t.turns) == 3 for t in trajs)
    for t in trajs:
        _check_tokens(t, tiny_policy)
        # later turns open with the end of the assistant turn the model did not close itself
        assert tiny_policy.chat.decode(t.turns[1].obs_token_ids).startswith("<|im_end|>\n")
        assert tiny_policy.chat.decode(t.turns[1].obs_token_ids).endswith("<|im_start|>assistant\n")


def test_long_episodes_stay_token_exact_with_windowed_deltas(tiny_policy, monkeypatch):
    # 24 turns cross several scheduled full-render checks (turns 1, 2, 4, 8, 16)
    trajs = collect(lambda: Echo(length=24, max_turns=30), tiny_policy, episodes=1, group_size=2,
                    sampling=SamplingParams(max_tokens=4, seed=0))
    assert all(t.error is None and len(t.turns) == 24 for t in trajs)
    for t in trajs:
        _check_tokens(t, tiny_policy)
    spliced = collect(lambda: Echo(length=24, continuation=True, max_turns=30), tiny_policy, episodes=1,
                      sampling=SamplingParams(max_tokens=4, seed=1))
    assert spliced[0].error is None
    _check_tokens(spliced[0], tiny_policy)


def test_continuation_observations_are_spliced_without_a_turn_boundary(tiny_policy):
    trajs = collect(lambda: Echo(length=3, continuation=True), tiny_policy, episodes=1,
                    sampling=SHORT)
    t = trajs[0]
    _check_tokens(t, tiny_policy)
    assert tiny_policy.chat.decode(t.turns[1].obs_token_ids) == "\n<information>turn 1 ok</information>\n"


def test_groups_share_the_env_seed_and_sample_differently(tiny_policy):
    trajs = collect(lambda: Echo(length=1), tiny_policy, episodes=2, group_size=3, seed=10,
                    sampling=SamplingParams(max_tokens=8))
    assert [t.seed for t in trajs] == [10, 10, 10, 11, 11, 11]
    assert len({t.group_id for t in trajs}) == 2 and trajs[0].task_id == "task-10"
    assert len({tuple(t.turns[0].action_token_ids) for t in trajs[:3]}) == 3


def test_an_env_raising_on_step_3_fails_only_its_episodes():
    trajs = collect(lambda: Echo(length=4, raise_on=3, raise_seeds=(1,)), SayA, episodes=3)
    failed = [t for t in trajs if t.error]
    assert [t.seed for t in failed] == [1]
    assert "boom on step 3" in failed[0].error and len(failed[0].turns) == 2
    assert failed[0].outcome == {"success": False, "score": 0.0}
    assert all(len(t.turns) == 4 and t.terminated for t in trajs if not t.error)


def test_a_step_over_the_timeout_fails_the_episode():
    trajs = collect(lambda: Echo(length=2, sleep=0.5), SayA, episodes=1, step_timeout=0.1)
    assert trajs[0].error.startswith("TimeoutError") and not trajs[0].turns


def test_scripted_spec_policy_and_streaming_writer(tmp_path, tiny_dir):
    out = tmp_path / "t.jsonl"
    trajs = collect(lambda: Echo(length=2), SayA, episodes=2, group_size=2, writer=out)
    stored = list(read_trajectories(out))
    assert sorted(t.model_dump_json() for t in stored) == sorted(t.model_dump_json() for t in trajs)
    # a fresh scripted instance per episode, seeded by task and member
    assert trajs[0].turns[0].action != trajs[1].turns[0].action
    assert trajs[0].turns[0].reward_components == {"hit": 1.0} and trajs[0].success


def test_spans_map_to_the_action_tokens_they_cover(tiny_policy):
    t = collect(lambda: Echo(length=1), tiny_policy, episodes=1, sampling=SHORT)[0]
    turn, span = t.turns[0], t.turns[0].spans[0]
    covered = tiny_policy.chat.decode(turn.action_token_ids[span.token_start:span.token_end])
    before = tiny_policy.chat.decode(turn.action_token_ids[:span.token_start])
    assert turn.action[:3] in before + covered and len(before) <= span.start


def test_multi_agent_episodes_give_one_trajectory_per_agent(tiny_policy):
    trajs = collect_multi(Pair, {"alice": tiny_policy, "bob": SayA}, episodes=2, sampling=SHORT)
    assert [(t.agent_id, t.group_id) for t in trajs] == [
        ("alice", "Pair/0"), ("bob", "Pair/0"), ("alice", "Pair/1"), ("bob", "Pair/1")]
    alice, bob = trajs[0], trajs[1]
    assert len(alice.turns) == len(bob.turns) == 2 and alice.outcome["success"]
    _check_tokens(alice, tiny_policy)
    assert bob.turns[0].action_token_ids == [] and bob.turns[1].observation[0]["content"] \
        .startswith("alice said: " + alice.turns[0].action[:5])


def test_branch_samples_k_continuations_from_one_prefix(tiny_policy):
    prefix = collect(lambda: Echo(length=3), tiny_policy, episodes=1, sampling=SHORT)[0]
    kids = branch(Echo(length=3), prefix, turn=1, k=3, policy=tiny_policy,
                  sampling=SamplingParams(max_tokens=6, seed=5))
    assert len(kids) == 3 and len({k.group_id for k in kids}) == 1
    for kid in kids:
        assert len(kid.turns) == 2 and kid.turns[0] == prefix.turns[0]
        assert kid.turns[1].obs_token_ids == prefix.turns[1].obs_token_ids
        _check_tokens(kid, tiny_policy)
    assert len({tuple(k.turns[1].action_token_ids) for k in kids}) == 3


def test_policy_spec_strings_resolve(tiny_dir):
    trajs = collect(lambda: Echo(length=1), f"hf:{tiny_dir}", episodes=1,
                    sampling=SamplingParams(max_tokens=3))
    assert trajs[0].policy == f"hf:{tiny_dir}" and len(trajs[0].turns[0].action_token_ids) == 3

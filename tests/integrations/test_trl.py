"""`trl.GRPOTrainer` training on an envgym environment through `EnvgymRollout`."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("trl", reason="the `trl` extra is not installed (pip install 'envgym[trl]')")

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

ENV = "envgym/TimeSeries-v0"
ENV_KWARGS = {"series_length": 512, "sketch_points": 4, "zoom_points": 4, "max_rounds": 1,
              "tool_format": "tag"}


def _trainer(tiny_model, tmp_path, rollout, steps=2, **config):
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from envgym.integrations.trl import envgym_reward, make_dataset

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    tokenizer.padding_side = "left"
    args = GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=steps,
                      per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=6, learning_rate=1e-3, beta=0.0,
                      logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
                      seed=0, dataloader_num_workers=0, **config)
    return GRPOTrainer(model=str(tiny_model), reward_funcs=[envgym_reward], args=args,
                       processing_class=tokenizer, rollout_func=rollout,
                       train_dataset=make_dataset(ENV, range(8), ENV_KWARGS))


def test_grpo_trainer_runs_two_steps_and_never_trains_observation_tokens(tiny_model, tmp_path):
    from envgym.integrations.trl import EnvgymRollout

    rollout = EnvgymRollout(ENV, ENV_KWARGS, max_turns=3)
    trainer = _trainer(tiny_model, tmp_path, rollout)
    batches = []
    generate = trainer._generate_and_score_completions

    def spy(inputs):
        out = generate(inputs)
        batches.append((out, list(rollout.last)))
        return out

    trainer._generate_and_score_completions = spy
    trainer.train()

    assert trainer.state.global_step == 2 and batches
    multi_turn = 0
    for out, trajs in batches:
        mask = (out["completion_mask"] * out["tool_mask"]).tolist()
        ids = out["completion_ids"].tolist()
        assert len(trajs) == len(ids)
        for row_ids, row_mask, traj in zip(ids, mask, trajs):
            assert traj.error is None, traj.error
            # rebuild, position by position, which completion tokens the environment wrote
            env_positions, pos = set(), 0
            for i, turn in enumerate(traj.turns):
                if i > 0:
                    env_positions |= set(range(pos, pos + len(turn.obs_token_ids)))
                    pos += len(turn.obs_token_ids)
                pos += len(turn.action_token_ids)
            multi_turn += bool(env_positions)
            assert all(row_mask[p] == 0 for p in env_positions)  # no observation token trained
            trained = [p for p, m in enumerate(row_mask) if m]
            assert len(trained) == sum(len(t.action_token_ids) for t in traj.turns)
            assert row_ids[:pos] == traj.token_sequence()[0][len(traj.turns[0].obs_token_ids):]
    assert multi_turn, "the episodes must have observation tokens between actions"
    rewards = [log["rewards/envgym_reward/mean"] for log in trainer.state.log_history
               if "rewards/envgym_reward/mean" in log]
    expected = [sum(t.total_reward for t in trajs) / len(trajs) for _, trajs in batches]
    assert rewards == pytest.approx(expected, abs=1e-5)  # the environment's returns reached TRL


def test_turn_rewards_and_failures_reach_the_reward_functions(tiny_model, tmp_path):
    from envgym.integrations.trl import EnvgymRollout, make_dataset, to_trl

    data = make_dataset(ENV, [3, 4], ENV_KWARGS)
    assert data[0]["envgym_seed"] == 3 and data[0]["prompt"][0]["envgym_seed"] == 3
    rollout = EnvgymRollout(ENV, ENV_KWARGS, max_turns=2)
    trainer = _trainer(tiny_model, tmp_path, rollout, steps=1)
    prompts = [data[0]["prompt"], data[0]["prompt"], data[1]["prompt"]]
    trainer.model.train()
    out = rollout(prompts, trainer)
    assert trainer.model.training  # sampling ran in eval mode and handed training mode back
    assert [t.seed for t in rollout.last] == [3, 3, 4]
    for i, t in enumerate(rollout.last):
        assert out["turn_rewards"][i] == [turn.reward for turn in t.turns]
        assert out["env_reward"][i] == pytest.approx(sum(out["turn_rewards"][i]))
        assert sum(out["reward_components"][i].values()) == pytest.approx(out["env_reward"][i])
        assert len(out["completion_ids"][i]) == len(out["env_mask"][i]) == len(out["logprobs"][i])
    broken = rollout.last[0].model_copy(update={"turns": [], "error": "RemoteEnvError: gone"})
    failed = to_trl([broken], rollout._policy, [prompts[0]])
    assert failed["env_reward"] == [None]  # unscored, never a fabricated zero
    assert failed["env_mask"] == [[0]] and failed["prompt_ids"][0] == out["prompt_ids"][0]
    from envgym.errors import InvalidConfig
    with pytest.raises(InvalidConfig, match="envgym_seed"):
        rollout([[{"role": "user", "content": "hi"}]], trainer)

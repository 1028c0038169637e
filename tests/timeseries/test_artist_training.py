"""ARTIST's rules on the trajectories `envgym train` writes with the shipped ARTIST config
(scaled to the tiny model, two steps). The untrained tiny model never zooms, so the rollout
policy's controller turns are steered (`conftest.SteeredController`); the reasoner answers,
the engine, the forks, the credit and the learner are the real thing."""

from __future__ import annotations

from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / "agents" / "configs" / "timeseries_artist_cpu.toml"


def _scaled(model: Path, out: Path):
    from envgym.agents.config import load_config

    cfg = load_config(CONFIG)
    cfg.output_dir, cfg.steps, cfg.checkpoint_every, cfg.eval_every = out, 2, 0, 0
    m = cfg.model
    m.policy, m.backend, m.dtype, m.device = str(model), "hf", "float32", "cpu"
    m.warm_start = "none"
    r = cfg.rollout
    r.tasks_per_step, r.eval_episodes, r.max_tokens, r.reasoner_samples = 3, 1, 12, 3
    r.deterministic = True
    cfg.log.tensorboard, cfg.log.progress, cfg.log.trajectories = False, False, True
    return cfg


def test_artist_rules_hold_on_the_trajectories_envgym_train_writes(tmp_path, artist_model,
                                                                   steered, monkeypatch):
    from envgym.agents import trainer
    from envgym.agents.credit.hierarchical import role_reward
    from envgym.agents.report import read_metrics

    from envgym.trajectory import read_trajectories

    real_policy, role_masks = trainer.make_rollout_policy, []
    monkeypatch.setattr(trainer, "make_rollout_policy",
                        lambda *a: steered(1.0, seed=11, inner=real_policy(*a)))
    from envgym.agents import multi_policy, update
    real_update = update.ppo_update

    def spy(model, ref, opt, batch, cfg, how, gen, kl_mask=None, role_mask=None):
        role_masks.append((batch, role_mask))
        return real_update(model, ref, opt, batch, cfg, how, gen, kl_mask, role_mask)
    for where in (trainer, multi_policy):  # wherever the train loop calls it from
        if hasattr(where, "ppo_update"):
            monkeypatch.setattr(where, "ppo_update", spy)

    cfg = _scaled(artist_model, tmp_path / "run")
    assert cfg.ppo.role_sum and cfg.rollout.reasoner_temperature == 0.7
    trainer.train(cfg, eval_at_start=False)
    metrics = read_metrics(tmp_path / "run/metrics.jsonl")
    trajs = [t for s in (1, 2) for t in read_trajectories(
        tmp_path / "run" / "trajectories" / f"step_{s:06d}.jsonl")]
    trained = [t for t in trajs if t.meta.get("credit")]
    assert trained
    retries = invalid = reasoner = 0
    for t in trained:
        mask = t.meta["credit"]["trained"]
        for turn, on in zip(t.turns, mask, strict=True):
            if turn.info.get("first_seg_retry"):  # a failed first-segment try: not trained
                assert not on
                retries += 1
            if turn.role == "controller":
                assert turn.temperature == 1.0
        if t.meta["sample"] > 0:  # a reasoner fork: its answer drawn at 0.7
            assert t.turns[-1].role == "reasoner" and t.turns[-1].temperature == 0.7
            reasoner += 1
        last = t.turns[-1]
        valid_zoom = any("round" in x.reward_components for x in t.turns)
        bad_round = any("format" in x.reward_components for x in t.turns
                        if not x.info.get("first_seg_retry") and x.role == "controller")
        if valid_zoom and bad_round and "accuracy" in last.info:  # an invalid later round
            assert last.info["role_components"]["controller"]["controller_format"] == -2.0
            # the override replaces R_c (issue 35 item 4): earlier charges are refunded
            r_c = sum(role_reward(x, "controller") for x in t.turns)
            assert abs(r_c + 2.0) < 1e-12
            invalid += 1
    assert retries and invalid and reasoner, (retries, invalid, reasoner)
    # ppo.role_sum: the update got the reasoner-token mask, 1 exactly on reasoner actions
    assert len(role_masks) == 2 and all(m is not None for _, m in role_masks)
    for batch, m in role_masks:
        assert 0 < float((m * batch.loss_mask).sum()) < float(batch.loss_mask.sum())
    # the learner scored each token at its recorded temperature: no drift from sampling
    assert all(step["logprob_drift"] < 1e-5 for step in metrics if "logprob_drift" in step)
    assert any("logprob_drift" in step for step in metrics)

"""Asynchronous training with bounded staleness (`rollout.max_staleness`, issue 40)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import torch

from envgym.agents.async_loss import off_policy_stats, truncated_is
from envgym.agents.async_rollouts import VERSIONS, bound_staleness, staleness_metrics
from envgym.agents.config import load_config
from envgym.errors import InvalidConfig
from envgym.trajectory import Trajectory, Turn, read_trajectories

from .async_fixture import STEPS, run, small_model, step_digests, tiny_config


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return small_model(tmp_path_factory.mktemp("async") / "m")


def _train(model: Path, out: Path, resume: bool = False, **options):
    from envgym.agents.trainer import train

    cfg = tiny_config(model, out, **options.pop("rollout", {}))
    for section, values in options.items():
        cfg[section] = {**cfg.get(section, {}), **values} if isinstance(values, dict) else values
    return train(load_config(cfg), resume=resume, eval_at_start=False)


def _metrics(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]


def _steps(out: Path, step: int) -> list[Trajectory]:
    return list(read_trajectories(out / "trajectories" / f"step_{step:06d}.jsonl"))


# ---- max_staleness = 0 is the synchronous loop ------------------------------------------------

def test_staleness_zero_writes_the_step_files_of_the_loop_before_async(tmp_path):
    from .sync_reference import train as loop_before_async

    before = run(tmp_path / "before", loop_before_async)
    assert len(before) == STEPS
    assert run(tmp_path / "now", max_staleness=0) == before


# ---- the loss ---------------------------------------------------------------------------------

def test_truncated_importance_weights_by_hand():
    old = torch.tensor([[-1.0, -2.0, -0.5, 0.0]])
    behaviour = torch.tensor([[-1.0, -3.0, -0.1, -9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0]])
    w, clipped, mismatch = truncated_is(old, behaviour, mask, cap=2.0)
    # exp(0) = 1; exp(1) = 2.718 -> cap 2; exp(-0.4) = 0.670; masked token 0
    assert torch.allclose(w, torch.tensor([[1.0, 2.0, math.exp(-0.4), 0.0]]))
    assert clipped.tolist() == [[0.0, 1.0, 0.0, 0.0]]
    # k3 of KL(mu || pi_old): r - 1 - log r with r = pi_old / mu
    k3 = [0.0, math.e - 2.0, math.exp(-0.4) - 1 + 0.4, 0.0]
    assert torch.allclose(mismatch, torch.tensor([k3]))
    seq_w, _, _ = truncated_is(old, behaviour, mask, cap=2.0, sequence=True)
    mean = (0.0 + 1.0 - 0.4) / 3  # one weight per row from the mean log-ratio
    assert torch.allclose(seq_w, torch.tensor([[math.exp(mean)] * 3 + [0.0]]))


def test_weights_are_detached_and_reported_per_token():
    old = torch.tensor([[-1.0, -1.0]], requires_grad=True)
    w, _, _ = truncated_is(old, torch.tensor([[-2.0, -1.0]]), torch.ones(1, 2), cap=2.0)
    assert not w.requires_grad  # a weight, never a path for the gradient
    assert off_policy_stats({}, 10.0) == {}  # the synchronous loop reports nothing new
    stats = off_policy_stats({"is_clipped": 1.0, "mismatch_kl": 0.5, "is_weight": 3.0}, 4.0)
    assert stats == {"async/is_clipped_frac": 0.25, "async/mismatch_kl": 0.125,
                     "async/is_weight_mean": 0.75}


def test_update_multiplies_policy_and_kl_terms_by_the_truncated_weight(model, tmp_path):
    """The same batch at staleness 0 and 1: with behaviour log-probs equal to the learner's
    own, the weights are 1 and the gradients agree; making the behaviour policy half as
    likely on one row doubles (cap 2) that row's whole loss, KL term included."""
    from envgym.agents.learner import build_batch, make_reference, token_logprobs
    from envgym.agents.update import ppo_update
    from transformers import AutoModelForCausalLM

    cfg = load_config(tiny_config(model, tmp_path, max_staleness=1))
    cfg.ppo.kl_coef = 0.5
    net = AutoModelForCausalLM.from_pretrained(model)
    ids = [[5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16]]
    trajs = [Trajectory(env_id="t", turns=[Turn(action="x", obs_token_ids=i[:3],
                                                action_token_ids=i[3:],
                                                action_logprobs=[0.0] * 3)]) for i in ids]
    adv = [[torch.full((3,), 1.0).numpy()], [torch.full((3,), -1.0).numpy()]]
    batch = build_batch(trajs, adv)
    with torch.no_grad():
        own, _ = token_logprobs(net, batch)
    batch.sample_logprobs = own.clone()

    def grads(b, staleness):
        cfg.rollout.max_staleness = staleness
        m = AutoModelForCausalLM.from_pretrained(model)
        ref = make_reference(m, cfg)
        opt = torch.optim.SGD(m.parameters(), lr=0.0)
        stats = ppo_update(m, ref, opt, b, cfg, "token_mean", torch.Generator().manual_seed(0))
        return [p.grad for p in m.parameters()], stats

    cfg.optim.max_grad_norm = 1e9
    g0, s0 = _grads_kept(grads, batch, 0)
    g1, s1 = _grads_kept(grads, batch, 1)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(g0, g1))
    assert s1["async/is_weight_mean"] == pytest.approx(1.0) and "async/is_weight_mean" not in s0
    halved = build_batch(trajs, adv)
    halved.sample_logprobs = own.clone()
    halved.sample_logprobs[0] -= math.log(2.0) * batch.loss_mask[0]  # mu = pi / 2 on row 0
    _, s2 = _grads_kept(grads, halved, 1)
    assert s2["async/is_weight_mean"] == pytest.approx(1.5)  # row 0 at 2, row 1 at 1
    assert s2["loss"] == pytest.approx(s1["loss"] + _row_loss(s1, cfg, net, batch, 0), rel=1e-4)


def _grads_kept(fn, batch, staleness):
    """Run `fn` with the optimiser's zero_grad kept from wiping the gradients."""
    import torch.optim

    orig = torch.optim.SGD.zero_grad
    torch.optim.SGD.zero_grad = lambda self, set_to_none=True: None
    try:
        return fn(batch, staleness)
    finally:
        torch.optim.SGD.zero_grad = orig


def _row_loss(stats, cfg, net, batch, row):
    """Row `row`'s share of the token-mean loss (PPO term + KL term) at weight 1."""
    from envgym.agents.learner import make_reference, token_logprobs
    from envgym.agents.update import kl_penalty

    with torch.no_grad():
        logp, _ = token_logprobs(net, batch)
        ref, _ = token_logprobs(make_reference(net, cfg), batch)
    m = batch.loss_mask
    per_tok = -batch.advantages + cfg.ppo.kl_coef * kl_penalty(logp, ref, "k3")
    return float((per_tok * m)[row].sum() / m.sum())


# ---- the bound --------------------------------------------------------------------------------

def _traj(versions: list[int]) -> Trajectory:
    return Trajectory(env_id="t", turns=[Turn() for _ in versions], meta={VERSIONS: versions})


def test_bound_drops_or_masks_turns_older_than_the_bound_and_counts_them():
    fresh, spanning, stale = _traj([4, 5]), _traj([3, 4]), _traj([2, 4])
    kept, masked, dropped = bound_staleness([fresh, spanning, stale], 5, 2, "drop")
    assert kept == [fresh, spanning] and masked == {} and dropped == 1
    kept, masked, dropped = bound_staleness([fresh, spanning, stale], 5, 2, "keep")
    assert kept == [fresh, spanning, stale] and dropped == 0
    assert masked == {2: [0]}  # only the turn beyond the bound leaves the loss
    metrics, values = staleness_metrics([fresh, spanning], 5, 2)
    assert sorted(values) == [0, 1, 1, 2]
    assert metrics["async/staleness/1"] == 0.5 and metrics["async/staleness_max"] == 2.0


# ---- the asynchronous loop --------------------------------------------------------------------

def test_rollouts_run_ahead_and_every_turn_is_exactly_n_versions_old(model, tmp_path):
    out = tmp_path / "run"
    _train(model, out, rollout={"max_staleness": 2}, ppo={"kl_coef": 0.1},
           log={"tensorboard": True})
    for step in range(1, STEPS + 1):
        for t in _steps(out, step):
            assert t.meta[VERSIONS] == [max(0, step - 3)] * len(t.turns)
            assert all(turn.action_logprobs for turn in t.turns if turn.action_token_ids)
    records = _metrics(out)
    assert [r["async/staleness_max"] for r in records] == [0.0, 1.0, 2.0]
    last = records[-1]
    assert last["async/staleness/2"] == 1.0 and last["async/dropped_stale"] == 0.0
    for key in ("async/mismatch_kl", "async/is_clipped_frac", "time/generator_idle_s",
                "time/learner_idle_s"):
        assert math.isfinite(last[key])
    assert last["async/mismatch_kl"] > 0  # the weights moved: behaviour != learner
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(str(out / "tb")).Reload()
    assert "async/staleness" in events.Tags()["histograms"]
    assert "async/mismatch_kl" in events.Tags()["scalars"]


def test_turn_sync_tags_each_turn_within_the_bound(model, tmp_path):
    out = tmp_path / "run"
    _train(model, out, rollout={"max_staleness": 1, "weight_sync": "turn"})
    for step in range(1, STEPS + 1):
        for t in _steps(out, step):
            versions = t.meta[VERSIONS]
            assert versions == sorted(versions)  # a later turn never has an older policy
            assert all(step - 2 <= v <= step - 1 for v in versions) or step == 1


def test_killed_async_run_resumes_exactly_from_its_checkpointed_in_flight_steps(model,
                                                                                tmp_path):
    """Steps 3-4 after a resume from step 2's checkpoint equal the uninterrupted run's: step 3
    was in flight at the checkpoint (saved), step 4 is sampled after the resume."""
    out = tmp_path / "run"
    opts = dict(rollout={"max_staleness": 1}, steps=4, checkpoint_every=2, keep_checkpoints=3)
    a = _train(model, out, **opts)
    state = torch.load(out / "checkpoints/step_0000002/state.pt", weights_only=False)
    assert [x["step"] for x in state["in_flight"]] == [3]
    uninterrupted = step_digests(out)
    for gone in ("final", "checkpoints/step_0000004", "trajectories/step_000003.jsonl",
                 "trajectories/step_000004.jsonl"):  # as if killed after step 2's checkpoint
        p = out / gone
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    b = _train(model, out, resume=True, **opts)
    assert step_digests(out) == uninterrupted
    sa, sb = a["model"].state_dict(), b["model"].state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)


# ---- what is refused --------------------------------------------------------------------------

@pytest.mark.parametrize("change, reason", [
    ({"model": {"strategy": "fsdp"}}, "fsdp"),
])
def test_validator_refuses_what_the_rollout_thread_cannot_run(tmp_path, change, reason):
    cfg = tiny_config(Path("m"), tmp_path, max_staleness=1)
    for section, values in change.items():
        cfg[section] = {**cfg[section], **values}
    with pytest.raises(InvalidConfig, match=reason):
        load_config(cfg)
    cfg["rollout"]["max_staleness"] = 0
    load_config(cfg)  # the synchronous loop takes it


def test_validator_takes_ray_workers_under_asynchrony(tmp_path):
    """Each thread is a lane of the pool (tests/integrations/test_ray.py trains it)."""
    cfg = tiny_config(Path("m"), tmp_path, max_staleness=1, workers=2)
    assert load_config(cfg).rollout.workers == 2


def test_validator_takes_the_vllm_backend_under_asynchrony(tmp_path):
    """The engine is the rollout thread's (tests/policies/test_vllm.py trains it, -m vllm)."""
    cfg = tiny_config(Path("m"), tmp_path, max_staleness=1)
    cfg["model"] = {**cfg["model"], "backend": "vllm"}
    assert load_config(cfg).model.backend == "vllm"


def test_validator_takes_two_policies_of_ilr_under_asynchrony():
    """One version stream per agent (tests/learner/test_async_ilr.py trains it)."""
    path = Path(__file__).resolve().parents[2] / "agents/configs/debate_ilr_cpu.toml"
    assert load_config(path, rollout={"max_staleness": 1}).rollout.max_staleness == 1

"""The synchronous training loop exactly as it was before the asynchronous trainer (issue 40),
kept only to test that `rollout.max_staleness = 0` still runs it bit for bit.

`train` below is `agents/trainer.py`'s `train` at commit 1abd821, unchanged but for this
docstring and its imports (every helper it calls is today's, from the trainer's module), so
a difference between the two runs can only come from the loop itself. Do not edit it to
follow the trainer: that would defeat the test.
"""

# ruff: noqa
from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
import torch

from envgym.agents.agent_metrics import agent_metrics, trainable
from envgym.agents.checkpoint import restore_rng
from envgym.agents.config import TrainConfig
from envgym.agents.credit import compute_credit
from envgym.agents.credit.base import split_failed
from envgym.agents.credit.ig import scorer_options as ig_scorer_options
from envgym.agents.learner import attach_ig, dist_info
from envgym.agents.multi_policy import build_team
from envgym.agents.report import MetricsLogger, Progress, rollout_metrics
from envgym.agents.runfiles import (CONFIG_FILE, ZERO_SIGNAL_STEPS, StopOnInterrupt,
                                    TrainingInterrupted, prepare_output, zero_signal_warning)
from envgym.agents.steplog import write_step
from envgym.agents.structure import drop_fixed_agents, update_run_state
from envgym.agents.trainer import (TaskSampler, _checkpoint, check_endpoints, check_failures,
                                   evaluate, make_rollout_policy, rollout, seed_everything,
                                   setup_distributed)
from envgym.runstate import RunState
from envgym.tree import failed_units, rollout_units, tree_metrics
from envgym.trajectory import Trajectory


def train(cfg: TrainConfig, resume: bool = False, model: Any = None, tokenizer: Any = None,
          model_path: str | None = None, eval_at_start: bool = True,
          overwrite: bool = False) -> dict[str, Any]:
    """Run (or resume) the configured training; returns the evaluations, model and policy.

    An output_dir that holds a run needs `resume` or `overwrite`; Ctrl-C stops after the
    current step with a checkpoint (`TrainingInterrupted` says how to resume)."""
    setup_distributed()
    rank, world = dist_info()
    state = prepare_output(cfg, resume, overwrite, rank)  # before any model or SFT work
    check_endpoints(cfg)
    out = cfg.output_dir
    ckpt_dir = out / "checkpoints"
    seed_everything(cfg.seed + rank)
    # model (SFT warm start), reference, optimizer, scheduler: one learner, or one per
    # [agents.ID] (ILR: each agent its own policy; agents.multi_policy)
    team = build_team(cfg, out, model, tokenizer, model_path)
    sampler = TaskSampler(cfg.envs, cfg.seed)
    shuffle = torch.Generator().manual_seed(cfg.seed)
    run = RunState()  # run-level state environments share across episodes and steps
    start = 0
    if state is not None:
        team.load_state_dict(state)
        sampler.cursor, start = state["cursor"], state["step"]
        own = state["rank_rng"][rank] if len(state["rank_rng"]) == world else {}
        shuffle.set_state(own.get("shuffle", state["shuffle"]))
        run.load_state_dict(state["run_state"])
        restore_rng(state["rank_rng"][rank] if len(state["rank_rng"]) == world else state["rng"])
    team.attach_policies(lambda m, tok, path: make_rollout_policy(cfg, m, tok, path))
    policy, tokenizer = team.policy, team.tokenizer  # {agent: policy} with [agents.ID]
    logger = MetricsLogger(out, resume_step=start, tensorboard=cfg.log.tensorboard and rank == 0,
                           wandb=cfg.log.wandb and rank == 0, wandb_project=cfg.log.wandb_project,
                           config=cfg.model_dump(mode="json")) if rank == 0 else None
    loss_agg = cfg.ppo.loss_agg
    evals: dict[int, dict[str, Any]] = {}
    if start == 0 and rank == 0 and eval_at_start:
        evals[0] = evaluate(policy, cfg, 0, out, run)
        logger.log(0, {k: v for k, v in evals[0].items() if not k.startswith("_")})
    progress = Progress(cfg.steps, start, cfg.log.progress) if rank == 0 else None
    zero_run = 0  # consecutive steps without any non-zero advantage
    with StopOnInterrupt() as interrupt:  # Ctrl-C: stop after this step, checkpointed
        for step in range(start + 1, cfg.steps + 1):
            t0 = time.perf_counter()
            run.step = step  # what environments read at reset (decaying bonuses)
            # 1-2. sample tasks and roll out (each rank takes its share of the step's tasks)
            trajs: list[Trajectory] = []
            for k, first, n in sampler.next(step, cfg.rollout.tasks_per_step):
                share = np.array_split(np.arange(first, first + n), world)[rank]  # contiguous seeds
                if len(share):
                    trajs += rollout(policy, cfg.envs[k], int(share[0]), len(share),
                                     cfg.rollout.group_size, cfg, cfg.rollout.temperature,
                                     sampling_seed=(cfg.seed * 1_000_003 + step) * world + rank,
                                     tree=True, run=run)
            t_roll = time.perf_counter() - t0
            # failed episodes carry no reward signal: out of their groups before credit
            trajs, failed = split_failed(trajs)
            # a SLATE tree fails as a whole and counts once, like one episode
            check_failures(step, failed_units(failed), rollout_units(trajs + failed),
                           cfg.rollout.max_failed_fraction)
            update_run_state(run, trajs)  # IRT abilities, reward histories learn from the step
            # 3. batch-level rewards (judge scores come from the environments' own steps)
            ig_stats = attach_ig(trajs, policy, seed=cfg.seed + step, options=ig_scorer_options(
                cfg.credit_options.get("ig"))) if "ig" in cfg.credit else {}
            # 4. credit
            credit = compute_credit(trajs, cfg.credit, cfg.credit_options, tokenizer=tokenizer,
                                    seed=cfg.seed + step)
            credit = drop_fixed_agents(credit)  # trainable=False agents: no gradient
            how = loss_agg if loss_agg != "auto" else (credit.loss_agg or "token_mean")
            if cfg.log.trajectories and rank == 0:
                write_step(out, step, trajs + failed, credit, cfg.credit, tokenizer)
            # 5. update: PPO on the batch (each learner on its own agent's trajectories)
            stats = team.update(credit, cfg, how, shuffle)
            # 6. sync weights to the rollout backend
            team.sync(cfg)
            # 7. log
            elapsed = time.perf_counter() - t0
            n_tokens = sum(len(x.action_token_ids) + len(x.obs_token_ids)
                           for t in trajs for x in t.turns)
            metrics = {**rollout_metrics(trainable(trajs)), **agent_metrics(trajs),
                       **tree_metrics(trajs), **ig_stats, **credit.stats,
                       **stats,
                       "rollout/failed": float(len(failed_units(failed))),
                       **team.lr_metrics(), "time/step_s": elapsed,
                       "time/rollout_s": t_roll, "throughput/tokens_per_s": n_tokens / elapsed}
            # 8. evaluate and checkpoint on schedule
            if rank == 0 and ((cfg.eval_every and step % cfg.eval_every == 0) or step == cfg.steps):
                evals[step] = evaluate(policy, cfg, step, out, run)
                metrics.update({k: v for k, v in evals[step].items() if not k.startswith("_")})
            if rank == 0:
                logger.log(step, metrics)
                progress.update(1, reward=metrics["reward"])
            due = (cfg.checkpoint_every and step % cfg.checkpoint_every == 0) or step == cfg.steps
            stop = interrupt.stop(world) and step < cfg.steps
            if due or stop:
                _checkpoint(ckpt_dir, step, team, sampler, shuffle, cfg, run)
            zero_run = zero_run + 1 if credit.stats.get("adv/zero_fraction", 0.0) >= 1.0 else 0
            if zero_run == ZERO_SIGNAL_STEPS and rank == 0:  # a run that cannot learn says so
                print(zero_signal_warning(step - zero_run + 1, step), file=sys.stderr, flush=True)
            if stop:
                if rank == 0:
                    progress.close()
                    logger.close()
                raise TrainingInterrupted(
                    f"stopped after step {step} of {cfg.steps}; checkpoint saved in {ckpt_dir}. "
                    f"Resume with: envgym train {out / CONFIG_FILE} --resume")
    team.save_final(out, rank)  # out/final, or out/final/ID per agent
    if rank == 0:
        progress.close()
        logger.close()
    return {"evals": evals, **team.result()}

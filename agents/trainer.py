"""`envgym train CONFIG`: GRPO-family RL on multi-turn environments, top to bottom.

Each step:
  1. sample tasks (a mixture over the configured environments, G rollouts per task);
  2. roll them out with the engine (`envgym.rollout.collect`) and the current policy;
  3. batch-level rewards come from the environments (IG spans, judges) in the trajectories;
  4. credit: the configured estimator chain turns them into per-token advantages;
  5. PPO-clip update on the loss mask (action tokens only), clip-low/high, optional KL;
  6. sync the weights to the rollout backend (shared in-process for hf, pushed for vLLM and
     for a served policy in its own process);
  7. log; 8. evaluate and checkpoint on schedule.

Run it on two CPU processes with `torchrun --nproc_per_node 2 -m envgym.agents.trainer CONFIG`
(gloo + DDP; each rank rolls out its share of the tasks, gradients are averaged).

With `rollout.max_staleness = N >= 1` steps 1-2 run ahead in a rollout thread
(`agents/async_rollouts.py`): step s is sampled by the weights of update s-1-N while the
learner works on earlier steps, step 6 publishes a version instead of syncing, and the loss
corrects each token with its behaviour log-probs (`agents/async_loss.py`). N = 0 is the
loop above, unchanged.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from envgym.agents.checkpoint import restore_rng, save_checkpoint
from envgym.agents.config import EnvConfig, TrainConfig, load_config
from envgym.agents.credit import compute_credit
from envgym.agents.credit.base import split_failed
from envgym.agents.credit.ig import scorer_options as ig_scorer_options
from envgym.agents.fsdp import rollout_weights
from envgym.agents.learner import attach_ig, dist_info, unwrap
from envgym.agents.multi_policy import Team, build_team
from envgym.agents.agent_metrics import agent_metrics, trainable
from envgym.agents.async_rollouts import (StepRollouts, learner_batch, mask_turns,
                                          publish_update, start_rollout_thread)
from envgym.agents.report import MetricsLogger, Progress, mean_ci, rollout_metrics
from envgym.agents.runfiles import (CONFIG_FILE, ZERO_SIGNAL_STEPS, StopOnInterrupt,
                                    TrainingInterrupted, prepare_output, zero_signal_warning)
from envgym.agents.steplog import log_histogram, write_step
from envgym.agents.structure import (drop_fixed_agents, env_kwargs, structured_rollout,
                                     update_run_state)
from envgym.agents.update import _global_sum
from envgym.errors import EnvGymError
from envgym.runstate import RunState, env_factory
from envgym.tree import failed_units, final_paths, rollout_units, tree_metrics
from envgym.trajectory import Trajectory, write_trajectories

__all__ = ["RolloutFailed", "TaskSampler", "evaluate", "rollout", "train"]


class RolloutFailed(EnvGymError):
    """Too many of a step's rollouts failed (`rollout.max_failed_fraction`) to learn from."""


# ---- tasks ----------------------------------------------------------------------------------

class TaskSampler:
    """Deterministic task schedule: step s draws its environment mixture from rng(seed, s), and
    each environment walks its train seed range in order. The cursor is the whole state."""

    def __init__(self, envs: list[EnvConfig], seed: int):
        self.envs, self.seed = envs, seed
        self.cursor = [0] * len(envs)
        weights = np.array([e.weight for e in envs])
        self.p = weights / weights.sum()

    def next(self, step: int, n_tasks: int) -> list[tuple[int, int, int]]:
        """[(env index, first task seed, number of tasks)] for this step."""
        counts = np.random.default_rng([self.seed, step]).multinomial(n_tasks, self.p)
        plan = []
        for k, n in enumerate(counts):
            if n:
                lo, hi = self.envs[k].train_seeds
                plan.append((k, lo + self.cursor[k] % (hi - lo), int(n)))
                self.cursor[k] += int(n)
        return plan


def rollout(policy: Any, env: EnvConfig, first_seed: int, n_tasks: int, group_size: int,
            cfg: TrainConfig, temperature: float, sampling_seed: int,
            tree: bool = False, run: RunState | None = None,
            branch_k: int | None = None) -> list[Trajectory]:
    """G rollouts of each of `n_tasks` consecutive task seeds, through the rollout engine;
    with `tree` and `rollout.branch_k`, SLATE's Algorithm 1 instead (`envgym.tree`: G trees
    per task, k siblings per step; `branch_k` overrides k: evaluation passes 1, one path
    with the same forced answer as training). Multi-agent and
    ARTIST runs get their structure from `structure.structured_rollout`; every environment
    is bound to the run's state (`envgym.runstate`)."""
    from envgym.policy import SamplingParams
    from envgym.rollout import collect

    sampling = SamplingParams(max_tokens=cfg.rollout.max_tokens, temperature=temperature,
                              top_p=cfg.rollout.top_p, seed=sampling_seed)
    structured = structured_rollout(policy, env, first_seed, n_tasks, group_size, cfg, sampling,
                                    run)
    if structured is not None:
        return structured
    kwargs = env_kwargs(env, cfg)  # + rollout.max_turns where the constructor takes it
    if tree and cfg.rollout.branch_k:
        from envgym.tree import slate_trees
        return slate_trees(env.id, policy, first_seed=first_seed, n_tasks=n_tasks,
                           trees=group_size, k=branch_k or cfg.rollout.branch_k,
                           budget=cfg.rollout.slate_budget, eta=cfg.rollout.slate_eta,
                           env_kwargs=kwargs, sampling=sampling, seed=sampling_seed)
    target = env_factory(env.id, kwargs, run)
    if cfg.rollout.workers:
        from envgym.integrations.ray import training_pool
        target = training_pool(env.id, kwargs, run, cfg.rollout.workers)
    return collect(target, policy, episodes=n_tasks,
                   group_size=group_size, seed=first_seed,
                   env_kwargs=kwargs, sampling=sampling, progress=False,
                   **({"concurrency": 1} if cfg.rollout.deterministic else {}))


def sample_step(step: int, policy: Any, sampler: TaskSampler, cfg: TrainConfig, run: RunState
                ) -> StepRollouts:
    """Steps 1-2: sample the step's tasks and roll them out, each rank its share; failed
    episodes are set apart (they carry no reward signal) and a step with too many refused.
    The synchronous loop calls it inline, the rollout thread ahead of the learner."""
    rank, world = dist_info()
    t0 = time.perf_counter()
    run.step = step  # what environments read at reset (decaying bonuses)
    trajs: list[Trajectory] = []
    for k, first, n in sampler.next(step, cfg.rollout.tasks_per_step):
        share = np.array_split(np.arange(first, first + n), world)[rank]  # contiguous seeds
        if len(share):
            trajs += rollout(policy, cfg.envs[k], int(share[0]), len(share),
                             cfg.rollout.group_size, cfg, cfg.rollout.temperature,
                             sampling_seed=(cfg.seed * 1_000_003 + step) * world + rank,
                             tree=True, run=run)
    seconds = time.perf_counter() - t0
    trajs, failed = split_failed(trajs)
    # a SLATE tree fails as a whole and counts once, like one episode
    check_failures(step, failed_units(failed), rollout_units(trajs + failed),
                   cfg.rollout.max_failed_fraction)
    return StepRollouts(step, trajs, failed, seconds, list(sampler.cursor))


# ---- evaluation and metrics -----------------------------------------------------------------

def evaluate(policy: Any, cfg: TrainConfig, step: int, out_dir: Path | None = None,
             run: RunState | None = None) -> dict[str, Any]:
    """Held-out tasks (each environment's `eval_seeds`), one rollout each."""
    result: dict[str, Any] = {}
    all_rewards: list[float] = []
    for k, env in enumerate(cfg.envs):
        lo, hi = env.eval_seeds
        n = min(cfg.rollout.eval_episodes, hi - lo)
        held_out = env.model_copy(update={"kwargs": {**env.kwargs, **env.eval_kwargs}})
        trajs = rollout(policy, held_out, lo, n, 1, cfg, cfg.rollout.eval_temperature,
                        sampling_seed=cfg.seed + 7919 * (k + 1), run=run, tree=True,
                        branch_k=1)  # SLATE: one path, the answer forced as in training
        trajs = final_paths(trajs)  # a tree's steps are one episode: its final path
        done, failed = split_failed(trajs)  # a failed episode is not a zero reward
        name = env.id.split("/")[-1]
        result[f"eval/{name}/failed"] = float(len(failed))
        check_failures(step, failed, len(trajs), cfg.rollout.max_failed_fraction,
                       across_ranks=False)  # only rank 0 evaluates
        result.update(agent_metrics(done, f"eval/{name}/"))  # fixed partners apart
        done = trainable(done)
        rewards = [t.total_reward for t in done]
        all_rewards += rewards
        ci = mean_ci(rewards)
        result[f"eval/{name}/reward"] = ci["mean"]
        result[f"eval/{name}/reward_lo"], result[f"eval/{name}/reward_hi"] = ci["lo"], ci["hi"]
        result[f"eval/{name}/success"] = float(np.mean([t.success for t in done]))
        if any("judge_return" in t.outcome for t in done):  # Search-v0: EM beside the judge
            result[f"eval/{name}/judge_return"] = float(np.mean(
                [t.outcome.get("judge_return", 0.0) for t in done]))
        if out_dir is not None:
            write_trajectories(out_dir / f"eval_{name}_step{step}.jsonl", trajs)
    result["eval/reward"] = float(np.mean(all_rewards))
    result["_rewards"] = all_rewards
    return result


# ---- the run --------------------------------------------------------------------------------

def make_rollout_policy(cfg: TrainConfig, model: Any, tokenizer: Any, path: str,
                        version: int = 0) -> Any:
    """hf: an `HFPolicy` sharing the learner's module, so step 6 (sync) costs nothing; vllm,
    server (or hf under FSDP, whose shards cannot generate): an engine of its own, which gets
    the learner's weights now (a resumed run, an SFT warm start) and after each update.
    server: `serve-policy` in a child process (`policies/served.py`), serving `version` now."""
    if cfg.model.backend == "server":
        from envgym.agents.policies.served import ServedPolicy
        rank = dist_info()[0]
        policy = ServedPolicy(path, cfg.output_dir / (f"server_rank{rank}" if rank else "server"),
                              chunk_tokens=cfg.rollout.max_tokens)
        try:
            policy.load_state_dict(rollout_weights(model), version=version)
        except BaseException:
            policy.close()
            raise
        unwrap(model).eval()
        return policy
    if cfg.model.backend == "vllm":
        from envgym.agents.policies.vllm import VLLMPolicy
        policy = VLLMPolicy(path, gpu_memory_utilization=cfg.model.vllm_gpu_memory_utilization,
                            seed=cfg.seed, dtype=cfg.model.dtype)
    elif cfg.model.strategy == "fsdp" and dist_info()[1] > 1:
        from envgym.agents.policies.hf import HFPolicy
        policy = HFPolicy(path, tokenizer=tokenizer, seed=cfg.seed,
                          device=str(next(model.parameters()).device),
                          kv_reuse=cfg.rollout.kv_reuse, kv_cache_mb=cfg.rollout.kv_cache_mb)
    else:
        from envgym.agents.policies.hf import HFPolicy
        return HFPolicy(path, model=unwrap(model), tokenizer=tokenizer, seed=cfg.seed,
                        kv_reuse=cfg.rollout.kv_reuse, kv_cache_mb=cfg.rollout.kv_cache_mb,
                        autocast=cfg.model.dtype)
    sync_weights(policy, model, cfg)
    return policy


def sync_weights(policy: Any, model: Any, cfg: TrainConfig) -> None:
    if getattr(policy, "model", None) is not unwrap(model):  # an engine of its own
        policy.load_state_dict(rollout_weights(model))
    unwrap(model).eval()  # hf shares the module: nothing to copy


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def setup_distributed() -> None:
    if "RANK" in os.environ and not torch.distributed.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        torch.distributed.init_process_group(backend)


def teardown_distributed() -> None:
    """Ranks leave together, then close the process group. A rank that exits while rank 0
    still writes the final model tears gloo down under it: an abort at exit (SIGABRT,
    "terminate called without an active exception") that fails a finished run. Only after
    a clean run: after an error the other ranks may never reach the barrier."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


def check_endpoints(cfg: TrainConfig) -> None:
    """Build once each environment whose kwargs name an HTTP endpoint (a judge, a retriever),
    before any model work: a dead server is then an error at start-up naming it, not failed
    episodes (or silent zeros) mid-run."""
    import envgym

    for env in cfg.envs:
        if any(isinstance(v, str) and v.startswith(("http://", "https://"))
               for v in env.kwargs.values()):
            envgym.make(env.id, **env_kwargs(env, cfg)).close()


def train(cfg: TrainConfig, resume: bool = False, model: Any = None, tokenizer: Any = None,
          model_path: str | None = None, eval_at_start: bool = True,
          overwrite: bool = False) -> dict[str, Any]:
    """Run (or resume) the configured training; returns the evaluations, model and policy.

    An output_dir that holds a run needs `resume` or `overwrite`; Ctrl-C stops after the
    current step with a checkpoint (`TrainingInterrupted` says how to resume). Rollout
    servers the run started (`model.backend = "server"`) are stopped when it ends, also on
    an error (the returned policy is then closed)."""
    with contextlib.ExitStack() as children:
        return _train(cfg, resume, model, tokenizer, model_path, eval_at_start, overwrite,
                      children)


def _train(cfg: TrainConfig, resume: bool, model: Any, tokenizer: Any, model_path: str | None,
           eval_at_start: bool, overwrite: bool, children: contextlib.ExitStack
           ) -> dict[str, Any]:
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
    team.attach_policies(lambda m, tok, path: make_rollout_policy(cfg, m, tok, path, start))
    for lr in team.learners:  # a served policy's child process ends with the run
        if hasattr(lr.policy, "proc"):
            children.callback(lr.policy.close)
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
    ahead = start_rollout_thread(  # max_staleness >= 1: steps 1-2 in a thread of their own
        cfg, team, lambda s, pol, r: sample_step(s, pol, sampler, cfg, r), run, start,
        [StepRollouts.from_state(x) for x in (state or {}).get("in_flight", [])]
    ) if cfg.rollout.max_staleness else None
    policy = team.policy  # vLLM under asynchrony: the engine went to the thread (HF here)
    # Ctrl-C: stop after this step, checkpointed; the rollout thread ends with the loop
    with StopOnInterrupt() as interrupt, ahead or contextlib.nullcontext():
        for step in range(start + 1, cfg.steps + 1):
            t0 = time.perf_counter()
            # 1-2. sample tasks and roll out (each rank takes its share of the step's tasks);
            # failed episodes carry no reward signal: out of their groups before credit
            got = sample_step(step, policy, sampler, cfg, run) if ahead is None \
                else ahead.get(step)
            trajs, failed, t_roll = got.trajs, got.failed, got.seconds
            if ahead is not None:  # the staleness bound, its histogram and counts
                trajs, stale_turns, async_stats, stale_values = learner_batch(
                    got, step, cfg, ahead.learner_versions())  # per agent with [agents.ID]
            update_run_state(run, trajs)  # IRT abilities, reward histories learn from the step
            # 3. batch-level rewards (judge scores come from the environments' own steps)
            ig_stats = attach_ig(trajs, policy, seed=cfg.seed + step, options=ig_scorer_options(
                cfg.credit_options.get("ig"))) if "ig" in cfg.credit else {}
            # 4. credit
            credit = compute_credit(trajs, cfg.credit, cfg.credit_options, tokenizer=tokenizer,
                                    seed=cfg.seed + step)
            credit = drop_fixed_agents(credit)  # trainable=False agents: no gradient
            if ahead is not None:
                mask_turns(credit, stale_turns, trajs)  # rollout.stale = "keep"
            how = loss_agg if loss_agg != "auto" else (credit.loss_agg or "token_mean")
            if cfg.log.trajectories and rank == 0:
                write_step(out, step, trajs + failed, credit, cfg.credit, tokenizer)
            # 5. update: PPO on the batch (each learner on its own agent's trajectories)
            # 6. sync weights to the rollout backend (asynchronous: each learner publishes its
            # version `step` as its own update ends)
            stats = team.update(credit, cfg, how, shuffle, None if ahead is None else
                                lambda learner, v=step: publish_update(ahead, learner, v, run))
            if ahead is None:
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
            if ahead is not None:
                metrics.update({**async_stats, **ahead.idle_metrics()})
            # 8. evaluate and checkpoint on schedule
            if rank == 0 and ((cfg.eval_every and step % cfg.eval_every == 0) or step == cfg.steps):
                evals[step] = evaluate(policy, cfg, step, out, run)
                metrics.update({k: v for k, v in evals[step].items() if not k.startswith("_")})
            if rank == 0:
                logger.log(step, metrics)
                if ahead is not None:
                    log_histogram(logger, "async/staleness", stale_values, step)
                progress.update(1, reward=metrics["reward"])
            due = (cfg.checkpoint_every and step % cfg.checkpoint_every == 0) or step == cfg.steps
            stop = interrupt.stop(world) and step < cfg.steps
            if due or stop:
                _checkpoint(ckpt_dir, step, team, sampler, shuffle, cfg, run,
                            ahead.in_flight(step) if ahead is not None else None)
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


def check_failures(step: int, failed: list[Trajectory], total: int, max_fraction: float,
                   across_ranks: bool = True) -> None:
    """Refuse the step (on every rank alike) when more than `max_fraction` of it failed."""
    n_failed, n_total = float(len(failed)), float(total)
    if across_ranks:
        n_failed, n_total = _global_sum(n_failed), _global_sum(n_total)
    if n_total and n_failed / n_total > max_fraction:
        from envgym.evaluation import failure_reasons

        reasons = "; ".join(f"{n} × {r}" for r, n in failure_reasons(failed, limit=3).items())
        raise RolloutFailed(f"step {step}: {int(n_failed)} of {int(n_total)} rollouts failed, "
                            f"more than rollout.max_failed_fraction = {max_fraction:g}. "
                            f"Reasons on this rank: {reasons or 'see other ranks'}")


def _checkpoint(ckpt_dir: Path, step: int, team: Team, sampler: TaskSampler,
                shuffle: torch.Generator, cfg: TrainConfig, run: RunState,
                in_flight: list[StepRollouts] | None = None) -> None:
    """`in_flight` (asynchronous): the steps the rollout thread sampled beyond `step`; they
    are saved, and the task cursor is the one after the last of them."""
    from envgym.agents.checkpoint import rng_state

    rank, world = dist_info()
    mine = {**rng_state(), "shuffle": shuffle.get_state()}  # ranks' shuffles drift apart
    rngs = [mine]
    if world > 1:  # every rank's RNG, gathered to rank 0
        rngs = [None] * world
        torch.distributed.all_gather_object(rngs, mine)
    learners = team.state_dict()  # model, optimizer, scheduler (per agent); FSDP: collectives
    if rank == 0:
        save_checkpoint(ckpt_dir, step, {
            **learners, "cursor": in_flight[-1].cursor if in_flight else list(sampler.cursor),
            "shuffle": shuffle.get_state(), "config_digest": cfg.digest(),
            "run_state": run.state_dict(),
            "rank_rng": rngs,
            **({"in_flight": [r.state_dict() for r in in_flight]} if in_flight is not None
               else {})}, keep=cfg.keep_checkpoints)
    if world > 1:
        torch.distributed.barrier()


def main(argv: list[str] | None = None) -> None:
    """`python -m envgym.agents.trainer CONFIG [--resume | --overwrite]` (what torchrun
    launches); the same options as `envgym train`, errors as one line."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m envgym.agents.trainer",
                                     description="GRPO-family RL training from a TOML config.")
    parser.add_argument("config", nargs="?", help="training config (TOML, or a run's JSON)")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    parser.add_argument("--overwrite", action="store_true", help="replace the run in output_dir")
    parser.add_argument("--print-config", action="store_true",
                        help="print the resolved config (every default without CONFIG) as TOML")
    args = parser.parse_args(argv)
    if args.config is None and not args.print_config:
        parser.error("CONFIG is required (or --print-config)")
    try:
        if args.print_config:
            from envgym.agents.configdoc import default_config, to_toml
            print(to_toml(load_config(args.config) if args.config else default_config()), end="")
            return
        train(load_config(args.config), resume=args.resume, overwrite=args.overwrite)
        teardown_distributed()
    except TrainingInterrupted as e:
        print(str(e), file=sys.stderr)
        raise SystemExit(130) from None
    except EnvGymError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()

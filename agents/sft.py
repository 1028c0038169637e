"""`envgym sft CONFIG`: the supervised warm start on (scripted) trajectories, with the loss mask.

MIND, ARTIST and RefineRL fine-tune on demonstrations before RL. Here the demonstrations are
the environments' scripted policies, optionally mixed per turn (`{"oracle": 0.6, "random":
0.4}`) to give noisy data that leaves RL room to improve. Scripted trajectories are text only,
so they are tokenised here the way the rollout engine tokenises a live episode (chat-template
deltas, each action closed by the end-of-turn token); the loss is the token-mean NLL of the
action tokens alone.

Speed: observations are ~87% of the tokens of a time-series demonstration and carry no loss,
yet the vocabulary projection and log-softmax over them cost more than the whole tiny
transformer. So the decoder runs over every token (the actions need that context), but the
output head only over the positions that predict an action token (`token_logprobs` at the
loss mask); and each minibatch is cut to its own longest row instead of the dataset's.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from envgym.agents.config import TrainConfig, load_config
from envgym.agents.learner import TokenBatch, build_batch, load_model, token_logprobs
from envgym.errors import InvalidConfig
from envgym.trajectory import Trajectory, Turn, read_trajectories, write_trajectories

__all__ = ["action_nll", "multi_agent_demonstrations", "noisy_demonstrations", "run_sft", "sft",
           "sft_settings", "tokenize_trajectories", "warm_start", "weight_final_turns"]

KEY_FILE = "envgym_sft_settings.json"
"""Beside the SFT model: the settings it was trained with, so a changed `[sft]` rebuilds it."""


def noisy_demonstrations(env_id: str, mix: dict[str, float], episodes: int, seeds: tuple[int, int],
                         env_kwargs: dict[str, Any] | None = None, seed: int = 0) -> list[Trajectory]:
    """Play `episodes` episodes on task seeds from `seeds`, each turn's action taken by a
    scripted policy drawn from `mix` (name -> probability)."""
    import envgym
    from envgym.policy import load_policy

    names = list(mix)
    p = np.array([mix[n] for n in names], dtype=float)
    factories = [load_policy(f"scripted:{n}", env_id=env_id) for n in names]
    rng = np.random.default_rng(seed)
    env = envgym.make(env_id, **(env_kwargs or {}))
    out = []
    for k in range(episodes):
        task_seed = seeds[0] + k % (seeds[1] - seeds[0])
        policies = [f(seed * 100_003 + k) for f in factories]
        obs, _ = env.reset(seed=task_seed)
        messages, turns, done, info = list(obs), [], False, {}
        while not done:
            choice = int(rng.choice(len(names), p=p / p.sum()))
            action = policies[choice].act(env, messages)
            new, reward, terminated, truncated, info = env.step(action)
            turns.append(Turn(observation=list(obs), action=action, reward=reward,
                              reward_components=info.get("reward_components", {}),
                              role=info.get("role"), state_key=info.get("state_key"),
                              info={"policy": names[choice]}))
            messages += [{"role": "assistant", "content": action}, *new]
            obs, done = new, terminated or truncated
        out.append(Trajectory(env_id=env_id, task_id=env.task_id, seed=task_seed,
                              policy="scripted-mix:" + ",".join(f"{n}={mix[n]}" for n in names),
                              turns=turns, final_observation=list(obs),
                              outcome=info.get("outcome", {}), terminated=terminated,
                              truncated=truncated))
    env.close()
    return out


def multi_agent_demonstrations(env_id: str, mix: dict[str, float], episodes: int,
                               seeds: tuple[int, int], env_kwargs: dict[str, Any] | None = None,
                               seed: int = 0) -> list[Trajectory]:
    """`noisy_demonstrations` for a multi-agent environment (Debate-v0): every seat of an
    episode plays one scripted policy of `mix`, drawn per episode (a seat's policy keeps its
    own state across turns, so the per-turn mix of single-agent demonstrations does not
    apply); every agent's trajectory is a demonstration."""
    from envgym.rollout import collect_multi

    names = list(mix)
    p = np.array([mix[n] for n in names], dtype=float)
    counts = np.random.default_rng(seed).multinomial(episodes, p / p.sum())
    kwargs = dict(env_kwargs or {})
    max_turns = kwargs.pop("max_turns", None)
    out, done, span = [], 0, seeds[1] - seeds[0]
    for name, n in zip(names, counts, strict=True):
        if n:
            out += collect_multi(env_id, {"*": f"scripted:{name}"}, episodes=int(n),
                                 seed=seeds[0] + done % span, env_kwargs=kwargs,
                                 max_turns=max_turns)
            done += int(n)
    return out


def tokenize_trajectories(trajs: list[Trajectory], chat: Any) -> list[Trajectory]:
    """Fill `obs_token_ids` / `action_token_ids` of text trajectories (`chat`: ChatTokenizer).

    Each action is closed with the end-of-turn token the policy would sample, so the model
    learns to stop; the next observation is the template delta after it.
    """
    eos = min(chat.eos_token_ids)
    out = []
    for traj in trajs:
        history: list[dict[str, Any]] = []
        turns = []
        for i, turn in enumerate(traj.turns):
            if i == 0:
                obs_ids = chat.prompt_ids(turn.observation)
            else:
                obs_ids, _ = chat.observation_ids(history, turn.observation, ended_with_eos=True)
            history += [*turn.observation, {"role": "assistant", "content": turn.action}]
            turns.append(turn.model_copy(update={"obs_token_ids": obs_ids,
                                                 "action_token_ids": chat.encode(turn.action) + [eos]}))
        out.append(traj.model_copy(update={"turns": turns}))
    return out


def sft(model: Any, trajs: list[Trajectory], *, epochs: int, batch_size: int, lr: float,
        seed: int = 0, pad_id: int = 0, log: Any = None, final_turn_weight: float = 1.0
        ) -> list[float]:
    """Token-mean NLL on action tokens; returns the mean loss of each epoch.

    `final_turn_weight`: each token of the action that ended an episode (`terminated`: the
    answer, not a turn cut off by the turn limit) counts this many times in the mean. Why: a
    time-series demonstration spends about one action token in forty on its answer, so at
    weight 1 a warm start fits the zoom turns and a letter prior, and overwrites what the base
    could read (docs/demo.md, attempt 4)."""
    device = next(model.parameters()).device
    batch = weight_final_turns(build_batch(trajs, pad_id=pad_id), trajs, final_turn_weight)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    generator = torch.Generator().manual_seed(seed)
    model.train()
    losses = []
    for epoch in range(epochs):
        total, count = 0.0, 0
        for rows in torch.randperm(len(batch), generator=generator).split(batch_size):
            part = _trim(batch.select(rows)).to(device)
            nll, n_tokens = action_nll(model, part)
            loss = nll / max(n_tokens, 1)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            total, count = total + loss.item(), count + 1
        losses.append(total / max(count, 1))
        if log is not None:
            log(epoch + 1, {"sft/loss": losses[-1]})
    model.eval()
    return losses


def weight_final_turns(batch: TokenBatch, trajs: list[Trajectory], weight: float) -> TokenBatch:
    """`batch` with the loss weight of each terminated episode's last action set to `weight`
    (its tokens close the row: `build_batch` lays the turns end to end, unpadded on the left)."""
    if weight == 1.0:
        return batch
    mask = batch.loss_mask.clone()
    for row, traj in enumerate(trajs):
        if traj.terminated and traj.turns:
            end = sum(len(t.obs_token_ids) + len(t.action_token_ids) for t in traj.turns)
            end = min(end, mask.shape[1])
            start = max(0, end - len(traj.turns[-1].action_token_ids))
            mask[row, start:end] *= weight
    return dataclasses.replace(batch, loss_mask=mask)


def _trim(batch: TokenBatch) -> TokenBatch:
    """Drop the columns that are padding in every row (rows are right-padded)."""
    width = max(1, int(batch.attention_mask.sum(-1).max()))
    return TokenBatch(*(getattr(batch, f)[:, :width] for f in batch.__dataclass_fields__))


def action_nll(model: Any, batch: TokenBatch) -> tuple[torch.Tensor, float]:
    """(summed NLL of the loss-masked tokens, their weighted number: the mask's sum, which is
    the count when every weight is 1). `token_logprobs` projects to the vocabulary only at
    those positions (see the module docstring)."""
    logp, _ = token_logprobs(model, batch)
    return -(logp * batch.loss_mask).sum(), float(batch.loss_mask[:, 1:].sum())


def run_sft(cfg: TrainConfig) -> Path:
    """Load or generate demonstrations, fine-tune, save to `output_dir/sft` (an hf: model)."""
    from envgym.agents.policies.hf import HFPolicy
    from envgym.agents.report import MetricsLogger

    model, tokenizer, path = load_model(cfg.model, cfg.output_dir, cfg.seed)
    chat = HFPolicy(path, model=model, tokenizer=tokenizer).chat
    if cfg.sft.data:
        trajs = [t for f in cfg.sft.data for t in read_trajectories(f)]
    else:
        env = cfg.envs[0]
        from envgym.agents.structure import env_kwargs, is_multi_agent
        if is_multi_agent(env.id):  # every seat scripted, each agent's turns a demonstration
            trajs = multi_agent_demonstrations(env.id, cfg.sft.scripted, cfg.sft.episodes,
                                               env.train_seeds, env_kwargs(env, cfg), cfg.seed)
        else:
            trajs = noisy_demonstrations(env.id, cfg.sft.scripted, cfg.sft.episodes,
                                         env.train_seeds,
                                         {"max_turns": cfg.rollout.max_turns, **env.kwargs},
                                         cfg.seed)
    if cfg.sft.only_successful:
        trajs = [t for t in trajs if t.success]
    if not trajs:
        raise InvalidConfig("sft: no demonstrations (check sft.data / sft.only_successful)")
    if any(t.turns and not t.turns[0].action_token_ids for t in trajs):
        trajs = tokenize_trajectories(trajs, chat)
    out = cfg.output_dir / "sft"
    write_trajectories(cfg.output_dir / "sft_data.jsonl", trajs)
    logger = MetricsLogger(out, tensorboard=cfg.log.tensorboard)
    sft(model, trajs, epochs=cfg.sft.epochs, batch_size=cfg.sft.batch_size, lr=cfg.sft.lr,
        seed=cfg.seed, pad_id=tokenizer.pad_token_id or 0, log=logger.log,
        final_turn_weight=cfg.sft.final_turn_weight)
    logger.close()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / KEY_FILE).write_text(json.dumps(sft_settings(cfg), indent=1, sort_keys=True))
    return out


def sft_settings(cfg: TrainConfig) -> dict[str, Any]:
    """Everything `run_sft` reads: the base model, `[sft]`, the demonstrations' environment,
    turn limit and seed. The RL settings are left out, so tuning them keeps the warm start."""
    env = cfg.envs[0]
    return {"model": cfg.model.model_dump(mode="json", exclude={"warm_start"}),
            "sft": cfg.sft.model_dump(mode="json"), "seed": cfg.seed,
            "env": {"id": env.id, "kwargs": env.kwargs, "train_seeds": list(env.train_seeds)},
            "max_turns": cfg.rollout.max_turns}


def warm_start(cfg: TrainConfig) -> str:
    """`model.warm_start = "sft"`: the SFT model in output_dir/sft, trained now unless one
    with these exact settings is there; a stale one is rebuilt, with a line naming what
    changed."""
    out, want = cfg.output_dir / "sft", sft_settings(cfg)
    key = out / KEY_FILE
    if key.is_file() and json.loads(key.read_text()) == want and (out / "config.json").is_file():
        print(f"SFT warm start: reusing {out} (same settings)", file=sys.stderr, flush=True)
        return str(out)
    if (out / "config.json").is_file():
        old = json.loads(key.read_text()) if key.is_file() else None
        why = ("changed: " + ", ".join(_changed(old, want))) if old else "no record of its settings"
        print(f"SFT warm start in {out} is stale ({why}): rebuilding", file=sys.stderr, flush=True)
    return str(run_sft(cfg))


def _changed(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted names of the settings that differ (`sft.epochs`, `model.policy`)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [c for k in sorted(set(old) | set(new))
                for c in _changed(old.get(k), new.get(k), f"{prefix}{k}.")]
    return [prefix.rstrip(".")] if old != new else []


def main(config: str | Path) -> Path:
    return run_sft(load_config(config))

"""An agent loop for verl's multi-turn rollout that runs any envgym environment.

Rather than re-implement a conversation loop (stops, spliced `continuation` observations,
chat-template deltas, span mapping, bad-action handling), the loop runs envgym's rollout
engine for one episode and gives it a policy whose `generate` is verl's server manager. The
engine already keeps tokens exactly as sampled and tokenises only observation deltas, so the
trajectory's `token_sequence()` is the verl sample: the prompt is the opening observation's
ids, the response is everything after it, and the response mask is the engine's loss mask
(1 on sampled tokens, 0 on every observation token).

A dataset row names its episode in `extra_info` (or as top-level fields):
`{"env_id": "envgym/Search-v0", "seed": 17, "env_kwargs": {...}}`. The verl config selects
the loop with `actor_rollout_ref.rollout.agent.agent_loop_config_path` or the agent name
`envgym` in the row's `agent_name` field.
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from envgym.policy import Completion, SamplingParams
from envgym.tokens import ChatTokenizer

__all__ = ["EnvgymAgentLoop", "ServerPolicy", "episode_output"]


class ServerPolicy:
    """An envgym token policy whose samples come from verl's server manager.

    The engine calls `generate` from its own thread; each prompt is sent to the server
    manager on verl's event loop (one request per prompt, so verl's load balancer and
    sticky sessions work as for its own loops)."""

    def __init__(self, server_manager: Any, tokenizer: Any, loop: asyncio.AbstractEventLoop,
                 base_params: dict[str, Any], request_id: str):
        self.server, self.loop, self.params = server_manager, loop, dict(base_params)
        self.tokenizer = tokenizer
        self.chat = ChatTokenizer(tokenizer)
        self.name, self.request_id = "verl", request_id

    def generate(self, prompts: list[list[int]], sampling: SamplingParams) -> list[Completion]:
        futures = [asyncio.run_coroutine_threadsafe(self._one(p, sampling), self.loop)
                   for p in prompts]
        return [f.result() for f in futures]

    async def _one(self, prompt: list[int], sampling: SamplingParams) -> Completion:
        params = {**self.params, "max_tokens": sampling.max_tokens}
        if sampling.stop:
            params["stop"] = list(sampling.stop)
        out = await self.server.generate(request_id=self.request_id, prompt_ids=list(prompt),
                                         sampling_params=params)
        ids = list(out.token_ids)
        eos = bool(ids) and ids[-1] in self.chat.eos_token_ids
        text = self.chat.decode(ids[:-1] if eos else ids)
        logprobs = list(out.log_probs) if out.log_probs else [0.0] * len(ids)
        finish = "length" if len(ids) >= sampling.max_tokens and not eos else "stop"
        return Completion(text, ids, logprobs, finish, eos)


def episode_output(traj: Any, response_length: int) -> AgentLoopOutput:
    """verl's sample from one envgym trajectory: the first observation is the prompt."""
    ids, mask, logprobs = traj.token_sequence()
    n_prompt = len(traj.turns[0].obs_token_ids) if traj.turns else len(ids)
    response, rmask, rlogp = ids[n_prompt:], mask[n_prompt:], logprobs[n_prompt:]
    turn_ranges, at = [], 0
    for i, t in enumerate(traj.turns):
        start = at + (len(t.obs_token_ids) if i else 0)
        turn_ranges.append([start, start + len(t.action_token_ids)])
        at = start + len(t.action_token_ids)
    extra = {
        "turn_scores": [t.reward for t in traj.turns],
        "envgym": {"env_id": traj.env_id, "task_id": traj.task_id, "seed": traj.seed,
                   "state_keys": [t.state_key for t in traj.turns],
                   "roles": [t.role for t in traj.turns],
                   "turn_token_ranges": turn_ranges,
                   "spans": [[s.model_dump() for s in t.spans] for t in traj.turns],
                   "reward_components": [t.reward_components for t in traj.turns],
                   "outcome": traj.outcome, "error": traj.error},
    }
    return AgentLoopOutput(
        prompt_ids=ids[:n_prompt], response_ids=response[:response_length],
        response_mask=rmask[:response_length], response_logprobs=rlogp[:response_length],
        reward_score=float(traj.total_reward), num_turns=2 * len(traj.turns) + 1,
        metrics={}, extra_fields=extra)


@register("envgym")
class EnvgymAgentLoop(AgentLoopBase):
    """One envgym episode per dataset row, through envgym's engine."""

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        row = {**kwargs, **(kwargs.get("extra_info") or {})}
        if "env_id" not in row:
            raise ValueError("envgym agent loop: the dataset row needs extra_info.env_id "
                             "(and seed, env_kwargs)")
        rollout = self.config.actor_rollout_ref.rollout
        multi_turn = rollout.get("multi_turn", {}) or {}
        max_turns = int(multi_turn.get("max_assistant_turns") or 8)
        per_turn = int(multi_turn.get("max_tokens_per_turn") or rollout.response_length)
        policy = ServerPolicy(self.server_manager, self.tokenizer, asyncio.get_running_loop(),
                              sampling_params, uuid4().hex)
        traj = await asyncio.to_thread(_one_episode, row, policy, max_turns, per_turn,
                                       sampling_params)
        if traj.error is not None:
            raise RuntimeError(f"envgym episode failed: {traj.error}")
        return episode_output(traj, rollout.response_length)


def _one_episode(row: dict[str, Any], policy: ServerPolicy, max_turns: int, per_turn: int,
                 params: dict[str, Any]) -> Any:
    from envgym.rollout import collect

    sampling = SamplingParams(max_tokens=per_turn,
                              temperature=float(params.get("temperature", 1.0)),
                              top_p=float(params.get("top_p", 1.0)))
    (traj,) = collect(row["env_id"], policy, episodes=1, seed=int(row.get("seed", 0)),
                      env_kwargs=dict(row.get("env_kwargs") or {}), max_turns=max_turns,
                      sampling=sampling, batch_wait=0.0)
    return traj

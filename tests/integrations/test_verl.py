"""verl integration, on verl's own classes (run in the verl venv: `pytest -m verl`).

verl 0.9 pins transformers<5.11, so these tests run in the second venv `.ci/run` builds;
the main run deselects the `verl` marker.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

pytestmark = pytest.mark.verl
verl = pytest.importorskip("verl", reason="verl runs in its own venv (.ci/run: pytest -m verl)")

import torch  # noqa: E402

from envgym.integrations.verl.estimators import advantages_from_tensors, register  # noqa: E402


def _batch():
    """Two groups of three; multi-turn masks with observation gaps; outcome at the end."""
    mask = torch.tensor([[1, 1, 0, 0, 1, 1, 0],
                         [1, 1, 1, 0, 0, 1, 0],
                         [1, 0, 1, 1, 1, 0, 0],
                         [1, 1, 1, 1, 0, 0, 0],
                         [1, 0, 0, 1, 1, 1, 1],
                         [1, 1, 0, 1, 0, 0, 0]], dtype=torch.float32)
    rewards = torch.zeros_like(mask)
    for b, (pos, r) in enumerate([(5, 1.0), (5, 0.0), (4, 2.0), (3, 1.0), (6, 1.0), (3, 0.5)]):
        rewards[b, pos] = r
    index = np.array(["a", "a", "a", "b", "b", "b"], dtype=object)
    return rewards, mask, index


def test_estimators_are_in_verls_registry_and_are_envgyms_functions():
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY, get_adv_estimator_fn

    names = register()
    assert set(names) <= set(ADV_ESTIMATOR_REGISTRY)
    rewards, mask, index = _batch()
    for name in names:
        adv, returns = get_adv_estimator_fn(name)(token_level_rewards=rewards,
                                                  response_mask=mask, config=None, index=index)
        assert adv.shape == mask.shape and torch.all(adv[mask == 0] == 0)
        from envgym.integrations.verl.estimators import CHAINS

        want = advantages_from_tensors(rewards.numpy(), mask.numpy(), index, CHAINS[name])
        assert np.allclose(adv.numpy(), want)


def test_envgym_grpo_matches_verls_own_grpo_on_outcome_rewards():
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage, get_adv_estimator_fn

    register()
    rewards, mask, index = _batch()
    ours, _ = get_adv_estimator_fn("envgym_grpo")(token_level_rewards=rewards,
                                                  response_mask=mask, index=index)
    theirs, _ = compute_grpo_outcome_advantage(rewards, mask, index, epsilon=1e-6)
    assert torch.allclose(ours, theirs.float(), atol=1e-5)


def test_envgym_turn_credits_turn_rewards_to_their_turns():
    rewards, mask, index = _batch()
    rewards[0, 1] = 0.5  # a step reward inside turn 0 of row 0
    adv = advantages_from_tensors(rewards.numpy(), mask.numpy(), index, ["turn"])
    # row 0: turn 0 has tokens 0-1, turn 1 tokens 4-5; the step reward makes them differ
    assert adv[0, 0] == adv[0, 1] and adv[0, 4] == adv[0, 5] and adv[0, 0] != adv[0, 4]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def policy_server(tmp_path_factory):
    from envgym.agents.tiny import build_tiny_model

    model = build_tiny_model(tmp_path_factory.mktemp("m") / "m", hidden_size=48, layers=1,
                             include_envs=False)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "envgym.cli", "serve-policy", f"hf:{model}",
                             "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": "1"})
    import httpx

    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("envgym serve-policy did not come up")
    yield model, f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=30)


class OpenAIServerManager:
    """verl's server-manager interface (`generate(request_id, prompt_ids=, sampling_params=)`
    → `TokenOutput`) over an OpenAI-compatible endpoint with token ids."""

    def __init__(self, url: str, model: str):
        self.url, self.model = url, model  # the served model's name: others are a 400

    async def generate(self, request_id, *, prompt_ids, sampling_params, **_):
        import httpx
        from verl.workers.rollout.replica import TokenOutput

        body = {"model": self.model, "prompt": list(prompt_ids),
                "max_tokens": sampling_params.get("max_tokens", 16),
                "temperature": sampling_params.get("temperature", 1.0),
                "stop": sampling_params.get("stop"), "logprobs": 1, "seed": 3}
        async with httpx.AsyncClient(timeout=60) as client:
            r = await client.post(f"{self.url}/v1/completions", json=body)
        choice = r.json()["choices"][0]
        return TokenOutput(token_ids=choice["token_ids"],
                           log_probs=choice["logprobs"]["token_logprobs"])


def test_agent_loop_runs_a_multi_turn_episode_with_observations_masked(policy_server):
    import hydra
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, _agent_loop_registry
    from verl.utils.dataset.rl_dataset import RLHFDataset

    import envgym.integrations.verl.agent_loop  # noqa: F401  (registers "envgym")

    model, url = policy_server
    tok = AutoTokenizer.from_pretrained(model)
    cfg = OmegaConf.create({
        "actor_rollout_ref": {"rollout": {"response_length": 512, "prompt_length": 1024,
                                          "multi_turn": {"max_assistant_turns": 3,
                                                         "max_tokens_per_turn": 12}}},
        "data": {}})
    loop = hydra.utils.instantiate(config=_agent_loop_registry["envgym"],
                                   trainer_config=DictConfigWrap(cfg),
                                   server_manager=OpenAIServerManager(url, str(model)),
                                       tokenizer=tok,
                                   processor=None, dataset_cls=RLHFDataset,
                                   data_config=DictConfigWrap(cfg.data))
    row = {"extra_info": {"env_id": "envgym/TimeSeries-v0", "seed": 4,
                          "env_kwargs": {"series_length": 512, "max_rounds": 2,
                                         "tool_format": "tag"}}}
    out = asyncio.run(loop.run({"temperature": 1.0}, **row))
    info = out.extra_fields["envgym"]
    ranges = info["turn_token_ranges"]
    assert len(ranges) >= 2, "the tiny model's bad actions get a corrective observation"
    mask = np.array(out.response_mask)
    trained = np.zeros_like(mask)
    for s, e in ranges:
        trained[s:e] = 1
    assert np.array_equal(mask, trained)  # 1 exactly on sampled tokens, 0 on every observation
    assert (mask == 0).sum() > 0
    assert len(out.response_ids) == len(mask) == len(out.response_logprobs)
    assert out.extra_fields["turn_scores"] and len(info["state_keys"]) == len(ranges)
    assert out.reward_score == pytest.approx(sum(out.extra_fields["turn_scores"]))
    # the observation tokens are the template delta of what the env said
    obs_text = tok.decode([i for i, m in zip(out.response_ids, mask) if m == 0])
    assert "Invalid action" in obs_text or "zoom" in obs_text.lower()


def test_data_rows_replay_the_same_task():
    from envgym.integrations.verl.data import rows

    (a,) = rows("envgym/TimeSeries-v0", range(3, 4))
    (b,) = rows("envgym/TimeSeries-v0", range(3, 4))
    assert a == b and a["agent_name"] == "envgym" and a["extra_info"]["seed"] == 3
    assert a["prompt"][0]["role"] in ("system", "user") and a["prompt"][-1]["content"]


@pytest.mark.gpu
def test_whole_recipe_trains_on_one_gpu(tmp_path):
    """examples/verl/run.sh for a few steps (needs CUDA and vLLM; skipped elsewhere)."""
    pytest.importorskip("vllm")
    from envgym.agents.tiny import build_tiny_model

    model = build_tiny_model(tmp_path / "m", include_envs=False)
    r = subprocess.run(["bash", "examples/verl/run.sh", "data.train_batch_size=8",
                        "actor_rollout_ref.actor.ppo_mini_batch_size=8",
                        "actor_rollout_ref.rollout.n=2", "trainer.total_training_steps=2",
                        "trainer.logger=[console]", "trainer.save_freq=-1", "trainer.test_freq=-1"],
                       env={**os.environ, "ENV": "code", "MODEL": str(model), "GPUS": "1",
                            "DATA": str(tmp_path / "data")},
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]

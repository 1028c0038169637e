"""Stops and IG on real trajectories: a policy that writes past `</search>` never gets its
own `<information>` parsed, trained or scored; IG scores the ids the policy saw."""

from __future__ import annotations

from envgym.environments.search.ig import information_gain_ids, token_steps
from envgym.policy import SamplingParams
from envgym.rollout import branch, collect

from search_token_policies import WritingPolicy, ig_searcher, overrun

SAMPLING = SamplingParams(max_tokens=64, seed=0)


def _collect(policy, episodes=2, group_size=2, **env):
    return collect("envgym/Search-v0", policy, episodes=episodes, group_size=group_size,
                   env_kwargs={"max_turns": 3, **env}, sampling=SAMPLING)


def test_engine_passes_stops_and_cuts_the_action_at_search(tiny_policy):
    policy = WritingPolicy(tiny_policy, overrun)
    trajs = _collect(policy)
    assert all(set(s) >= {"</search>", "</answer>"} for s in policy.stops_seen)
    chat = tiny_policy.chat
    for traj in trajs:
        assert traj.error is None
        first = traj.turns[0]
        assert first.action.endswith("</search>") and "FAKE" not in first.action
        assert "FAKE" not in chat.decode(first.action_token_ids)  # not sampled, not trained
        ids, mask, _ = traj.token_sequence()
        trained = chat.decode([i for i, m in zip(ids, mask) if m])
        assert "FAKE" not in trained and "<information>" not in trained
        # the <information> in the token sequence is the retriever's, with loss mask 0
        obs = traj.turns[1]
        assert chat.decode(obs.obs_token_ids).startswith("\n\n<information>Doc 1(Title:")
        start = len(first.obs_token_ids) + len(first.action_token_ids)
        assert mask[start:start + len(obs.obs_token_ids)] == [0] * len(obs.obs_token_ids)
        assert "FAKE" not in chat.decode(ids)  # the model's own block never entered the stream


def test_ig_sees_the_retrieved_documents_not_the_models(tiny_policy):
    trajs = _collect(WritingPolicy(tiny_policy, overrun))
    for traj in trajs:
        _, steps = token_steps(traj, tiny_policy.chat.decode)
        assert len(steps) == 1
        block = tiny_policy.chat.decode(steps[0].block)
        assert "<information>Doc 1(Title:" in block and "FAKE" not in block


class Recorder:
    """Scores with the tiny model and keeps every (context, target) pair it was asked."""

    def __init__(self, policy):
        self.policy, self.chat, self.pairs = policy, policy.chat, []

    def score_ids(self, pairs):
        self.pairs += pairs
        return self.policy.score_ids(pairs)


def test_ig_contexts_are_the_recorded_ids_with_only_the_block_swapped(tiny_policy):
    trajs = _collect(WritingPolicy(tiny_policy, ig_searcher, seed=1), episodes=2, group_size=2,
                     protocol="ig")
    golden = [t.outcome["golden_answers"] for t in trajs]
    scorer = Recorder(tiny_policy)
    results = information_gain_ids(trajs, scorer, golden, n_random=2, seed=0)
    chat = tiny_policy.chat
    tail = chat.encode("\n<answer> ")
    n_ctx = 1 + 2
    assert scorer.pairs and len(scorer.pairs) % n_ctx == 0
    jobs = [scorer.pairs[i:i + n_ctx] for i in range(0, len(scorer.pairs), n_ctx)]
    steps = [(i, s) for i, t in enumerate(trajs) for s in token_steps(t, chat.decode)[1]]
    assert len(jobs) == len(steps) >= 4
    swapped = []
    for ((real, target), *randoms), (i, step) in zip(jobs, steps):
        ids = trajs[i].token_sequence()[0]
        end = step.docs_start + len(step.block)
        assert real == ids[:end] + tail  # the engine's recorded ids, chat template and all
        assert target == chat.encode(golden[i][0])
        assert chat.decode(ids[:end]).startswith("<|im_start|>user\n")
        block = chat.decode(step.block)
        assert block.startswith("\n<documents>") and block.endswith("</refine>") == step.has_refine
        for ctx, _ in randoms:  # the same prefix, another step's (documents, refine)
            assert ctx[:step.docs_start] == ids[:step.docs_start] and ctx[-len(tail):] == tail
            swapped.append(ctx != real)
    assert any(s.has_refine for _, s in steps)  # the joint swap really moves a refinement
    # the baseline never uses a block token-identical to the real one (the same bad query
    # in a sibling rollout retrieves the same documents): content decides, not question id
    assert swapped and all(swapped)
    rows = [r for res in results for r in res["steps"]]
    assert all(r["ig"] is not None and r["logp_real"] < 0 for r in rows)


def test_branching_after_eos_and_after_continuations(tiny_policy):
    """Branch at turn >= 1 of a trajectory whose first action ended with EOS (the
    continuation then opened a user turn) and of one that was spliced."""
    from envgym.policy import Completion

    class EOSFirst(WritingPolicy):
        def generate(self, prompts, sampling):
            out = super().generate(prompts, sampling)
            eos = next(iter(self.chat.eos_token_ids))
            return [Completion(c.text, c.token_ids + [eos], c.logprobs + [-0.1], "stop", True)
                    for c in out]

    import envgym
    for policy in (EOSFirst(tiny_policy, overrun), WritingPolicy(tiny_policy, overrun)):
        (prefix,) = _collect(policy, episodes=1, group_size=1)
        assert len(prefix.turns) == 2
        kids = branch(envgym.make("envgym/Search-v0", max_turns=3), prefix, 1, 2, tiny_policy,
                      sampling=SamplingParams(max_tokens=4, seed=3))
        assert len(kids) == 2 and all(len(k.turns) == 2 for k in kids)
        assert kids[0].turns[1].obs_token_ids == prefix.turns[1].obs_token_ids


def test_openai_backend_sends_stops_and_the_engine_cuts_what_the_server_overran(
        tiny_model_dir, server_thread):
    """A server that ignores `stop` still cannot get text past `</search>` into the env."""
    from fastapi import FastAPI
    from transformers import AutoTokenizer

    from envgym.agents.policies.openai import OpenAIPolicy

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    app, bodies = FastAPI(), []
    text = "<think>t</think><search> Velmora </search><information>FAKE</information>"

    @app.post("/v1/completions")
    def completions(body: dict):
        bodies.append(body)
        ids = tok(text, add_special_tokens=False)["input_ids"]
        return {"choices": [{"index": 0, "text": text, "token_ids": ids, "finish_reason": "length",
                             "logprobs": {"token_logprobs": [-1.0] * len(ids)}}]}

    with server_thread(app) as url:
        policy = OpenAIPolicy(url, "tiny", tokenizer=str(tiny_model_dir), retries=0)
        (traj,) = collect("envgym/Search-v0", policy, episodes=1, env_kwargs={"max_turns": 1},
                          sampling=SamplingParams(max_tokens=8))
    assert "</search>" in bodies[0]["stop"] and bodies[0]["include_stop_str_in_output"]
    action = traj.turns[0]
    assert action.action.endswith("</search>") and "FAKE" not in action.action
    assert "FAKE" not in policy.chat.decode(action.action_token_ids)
    assert len(action.action_logprobs) == len(action.action_token_ids)


def test_hf_backend_stops_at_the_token_that_completes_a_stop_string(tiny_policy):
    """The tiny model writes random text; with a one-letter stop string each completion must
    end at the first token whose text contains it (or run to max_tokens without it)."""
    chat = tiny_policy.chat
    prompt = chat.prompt_ids([{"role": "user", "content": "say something"}])
    outs = tiny_policy.generate([prompt] * 6, SamplingParams(max_tokens=40, seed=7, stop=("e",)))
    stopped = 0
    for c in outs:
        if c.ended_with_eos:
            continue
        if c.finish_reason == "stop":
            stopped += 1
            assert "e" in chat.decode(c.token_ids) and "e" not in chat.decode(c.token_ids[:-1])
        else:
            assert len(c.token_ids) == 40 and "e" not in c.text
    assert stopped >= 1

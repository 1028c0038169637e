import warnings

import pytest

from envgym.environments.code import CodeRefineEnv, load_builtin

warnings.filterwarnings("ignore", message=".*NOT a security boundary.*")

SUBSET = ["range_span", "boats", "lis", "two_teams", "isqrt", "string_period"]


@pytest.fixture(scope="session")
def problems():
    return load_builtin()


@pytest.fixture(scope="session")
def subset(problems):
    return [p for p in problems if p.id in SUBSET]


@pytest.fixture
def make_env(subset):
    envs = []

    def factory(**kwargs):
        kwargs.setdefault("problems", subset)
        env = CodeRefineEnv(**kwargs)
        envs.append(env)
        return env

    yield factory
    for env in envs:
        env.close()


@pytest.fixture
def play():
    return run_episode


def run_episode(env, policy, seed=0, options=None):
    """One episode; returns (messages, infos, rewards)."""
    obs, info = env.reset(seed=seed, options=options)
    messages, infos, rewards = list(obs), [info], []
    done = False
    while not done:
        action = policy.act(env, messages)
        obs, reward, term, trunc, info = env.step(action)
        messages += [{"role": "assistant", "content": action}, *obs]
        infos.append(info)
        rewards.append(reward)
        done = term or trunc
    return messages, infos, rewards

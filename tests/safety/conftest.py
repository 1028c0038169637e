import pytest

from envgym.environments.safety import SafetyRulesEnv


@pytest.fixture
def env():
    with SafetyRulesEnv() as e:
        yield e

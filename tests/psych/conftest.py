import pytest

from envgym.environments.psych.env import ConsultEnv


@pytest.fixture(scope="session")
def env_factory():
    """Fast environments (lexicon encoder); the case set and bank are rebuilt per env (~1 s)."""
    made = []

    def make(**kwargs):
        env = ConsultEnv(**{"encoder": "lexicon", **kwargs})
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


def stage1(query: str = "chief_complaint: low mood") -> str:
    return f"<think>summarise</think><rag_query>{query}</rag_query>"


def stage2(think: str, answer: str) -> str:
    return f"<think>{think}</think><answer>{answer}</answer>"

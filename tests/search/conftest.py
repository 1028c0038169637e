import pytest

from search_helpers import DOCS
from envgym.environments.search.retrievers import BM25Retriever


@pytest.fixture(scope="session")
def bm25():
    return BM25Retriever.from_documents(DOCS)

import socket
import threading
import time

import pytest
import uvicorn

from envgym.environments.search.retrievers import BM25Retriever, Document

DOCS = [
    Document.make("0", "Velmora", "Velmora is a city located in Quandria. It exports copper pots."),
    Document.make("1", "Trisk Havel", "Trisk Havel was born in Velmora in 1901."),
    Document.make("2", "Orrin Pell", "Orrin Pell was born in Dastow in 1877."),
    Document.make("3", "Dastow", "Dastow is a city located in Brenvia. It exports honey."),
    Document.make("4", "Glass Guild", "Glass Guild was founded by Orrin Pell in 1920."),
    Document.make("5", "Trisk Havel", "Trisk Havel is employed by Glass Guild as a luthier."),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """A real uvicorn server on a free loopback port, in a background thread."""

    def __init__(self, app):
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            assert time.time() < deadline, "server did not start"
            time.sleep(0.02)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="session")
def docs():
    return DOCS


@pytest.fixture(scope="session")
def bm25():
    return BM25Retriever.from_documents(DOCS)


@pytest.fixture(scope="session")
def server_thread():
    """`with server_thread(app) as url:` runs a real uvicorn server on a free loopback port."""
    return ServerThread


@pytest.fixture
def unused_port():
    return free_port()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A very small real causal LM with a real byte-level BPE tokenizer and chat template."""
    import torch

    from envgym.agents.tiny import build_tiny_model
    torch.set_num_threads(1)  # the CI box is shared
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "m", hidden_size=48, layers=1,
                            include_envs=False)


@pytest.fixture(scope="session")
def tiny_policy(tiny_model_dir):
    from envgym.policy import load_policy
    return load_policy(f"hf:{tiny_model_dir}", device="cpu", threads=1)

import pytest

from envgym.environments.search.retrievers import (BM25Retriever, DenseRetriever, Document,
                                                   HybridRetriever, Retriever, load_retriever,
                                                   to_documents)
from envgym.errors import InvalidConfig, RetrieverUnavailable



def test_document_title_and_text():
    d = Document("7", '"Evan Morris"\nEvan Morris was a lobbyist.')
    assert (d.title, d.text) == ("Evan Morris", "Evan Morris was a lobbyist.")
    assert Document("8", "no title line").title == ""


def test_to_documents_accepts_rows_and_rejects_junk():
    docs = to_documents([{"id": 1, "contents": '"A"\nx'}, {"title": "B", "text": "y"}])
    assert docs[0] == Document("1", '"A"\nx') and docs[1].title == "B"
    with pytest.raises(InvalidConfig):
        to_documents([{"body": "z"}])


def test_bm25_ranks_the_fact_passage_first_for_each_query(bm25, docs):
    assert isinstance(bm25, Retriever)
    out = bm25.search(["Trisk Havel born", "Glass Guild founded", "Dastow located"], 2)
    assert [hits[0].document.id for hits in out] == ["1", "4", "3"]
    assert all(len(h) == 2 and h[0].score >= h[1].score for h in out)
    assert bm25.search([], 3) == []
    assert len(bm25.search(["x"], 100)[0]) == len(docs)  # topk is capped at the corpus size


def test_bm25_save_load_roundtrip(bm25, tmp_path):
    bm25.save(tmp_path / "ix")
    loaded = load_retriever(tmp_path / "ix")
    q = ["Orrin Pell born", "luthier"]
    assert [[(h.document, h.score) for h in r] for r in loaded.search(q, 3)] == \
           [[(h.document, h.score) for h in r] for r in bm25.search(q, 3)]


def test_load_retriever_on_a_plain_directory_says_what_to_do(tmp_path):
    with pytest.raises(RetrieverUnavailable, match="index build"):
        load_retriever(tmp_path)


@pytest.fixture(scope="module")
def dense(docs):
    return DenseRetriever.from_documents(docs, index="flat")


def test_dense_flat_and_hnsw_agree_and_roundtrip(dense, docs, tmp_path):
    q = ["Where was Trisk Havel born?", "Which city is in Brenvia?"]
    flat = [[h.document.id for h in r] for r in dense.search(q, 2)]
    assert flat[0][0] == "1" and flat[1][0] == "3"
    hnsw = DenseRetriever.from_documents(docs, index="hnsw")
    assert [[h.document.id for h in r] for r in hnsw.search(q, 2)] == flat
    dense.save(tmp_path / "d")
    again = load_retriever(tmp_path / "d")
    assert [[h.document.id for h in r] for r in again.search(q, 2)] == flat
    scores = [h.score for h in dense.search(q, 2)[0]]
    assert 0 < scores[1] <= scores[0] <= 1.0001  # cosine on normalised vectors
    with pytest.raises(InvalidConfig):
        DenseRetriever.from_documents(docs, index="ivf")


def test_hybrid_reciprocal_rank_fusion_by_hand(bm25, dense, docs, tmp_path):
    hybrid = HybridRetriever(bm25, dense, k_rrf=60, depth=len(docs))
    a = [h.document.id for h in bm25.search(["Trisk Havel born"], len(docs))[0]]
    b = [h.document.id for h in dense.search(["Trisk Havel born"], len(docs))[0]]
    expected = {d: 1 / (61 + a.index(d)) + 1 / (61 + b.index(d)) for d in a}
    top = hybrid.search(["Trisk Havel born"], 3)[0]
    best = sorted(expected, key=lambda d: (-expected[d], d))[:3]
    assert [h.document.id for h in top] == best
    assert top[0].score == pytest.approx(expected[best[0]])
    hybrid.save(tmp_path / "h")
    assert [h.document.id for h in load_retriever(tmp_path / "h").search(["Trisk Havel born"], 3)[0]] == best

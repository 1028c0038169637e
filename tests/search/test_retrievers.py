import numpy as np
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


# ---- BM25 scoring from the postings equals bm25s' own scoring ---------------------------


@pytest.fixture(scope="module")
def world_bm25():
    from envgym.environments.search.data import default_world

    world = default_world(0)
    return BM25Retriever.from_documents(world.corpus), [q.question for q in world.questions][:60]


def _bm25s_top(retriever, query, k):
    """What bm25s itself says: its tokenizer, its dense scores over the whole corpus."""
    import bm25s

    words = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
    ids = retriever.model.get_tokens_ids(words)
    scores = retriever.model.get_scores_from_ids(ids) if ids else np.zeros(len(retriever.docs))
    order = np.lexsort((np.arange(len(scores)), -scores))[:k]
    return [(int(i), float(scores[i])) for i in order], scores


def test_sparse_scoring_matches_bm25s_dense_scores(world_bm25):
    retriever, queries = world_bm25
    for q in queries + ["Velmora Velmora located", "born in the city"]:
        expected, dense = _bm25s_top(retriever, q, 5)
        hits = retriever.search([q], 5)[0]
        got = [(retriever.docs.index(h.document), h.score) for h in hits]
        assert [i for i, _ in got] == [i for i, _ in expected], q  # same docs, ties by order
        np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-5)
        assert all(abs(dense[i] - s) < 1e-4 for i, s in got)


def test_batched_search_equals_single_searches(world_bm25):
    retriever, queries = world_bm25
    batched = retriever.search(queries[:20], 3)
    assert batched == [retriever.search([q], 3)[0] for q in queries[:20]]


@pytest.mark.parametrize("query", ["", "the of and", "zzqx unknownword"])
def test_queries_without_known_words_still_get_k_hits(bm25, docs, query):
    hits = bm25.search([query], 3)[0]
    assert [h.document for h in hits] == docs[:3] and all(h.score == 0.0 for h in hits)


def test_fewer_matches_than_k_are_padded_with_zero_score_documents(bm25, docs):
    hits = bm25.search(["copper"], 4)[0]
    assert hits[0].document.id == "0" and hits[0].score > 0
    assert [h.score for h in hits[1:]] == [0.0, 0.0, 0.0]
    assert len({h.document.id for h in hits}) == 4


def test_repeated_query_words_count_twice_as_in_bm25s(bm25):
    once, twice = bm25.search(["Dastow"], 1)[0][0], bm25.search(["Dastow Dastow"], 1)[0][0]
    assert twice.score == pytest.approx(2 * once.score)

import json
from collections import Counter

from envgym.environments.search.data import load_corpus, load_tasks
from envgym.environments.search.env import SearchEnv
from envgym.environments.search.world import generate_world
from tests.samples import OWN, needs_real, real


def test_world_is_deterministic_and_sized(tmp_path):
    a, b = generate_world(3, n_questions=50), generate_world(3, n_questions=50)
    assert a.corpus == b.corpus and [q.to_dict() for q in a.questions] == [q.to_dict() for q in b.questions]
    assert generate_world(4, n_questions=5).corpus != a.corpus
    assert 2000 <= len(a.corpus) <= 5000
    assert len(generate_world(0, scale=0.2, n_questions=5).corpus) < len(a.corpus) / 3


def test_each_fact_in_exactly_one_passage_and_gold_ids_state_it():
    world = generate_world(0, n_questions=300)
    kinds = Counter((q.kind, q.hops) for q in world.questions)
    assert kinds[("single", 1)] and kinds[("comparison", 2)]
    assert {h for (k, h) in kinds if k == "bridge"} == {2, 3, 4}
    contents = {d["id"]: d["contents"] for d in world.corpus}
    for q in world.questions:
        for hop in q.chain:
            doc = contents[hop["doc_id"]]
            assert hop["entity"] in doc and hop["value"] in doc
            stating = [c for c in contents.values() if hop["entity"] in c and hop["value"] in c
                       and hop["query"].split()[-1] in c]
            assert stating == [doc], (hop, stating)
        assert set(q.gold_doc_ids) == {h["doc_id"] for h in q.chain}
    comparison = next(q for q in world.questions if q.kind == "comparison")
    a, c = comparison.chain
    assert comparison.golden_answers[0] == (a if int(a["value"]) < int(c["value"]) else c)["entity"]


def test_own_search_r1_files_load_and_search():
    rows = OWN / "search_r1"
    tasks, corpus = load_tasks(rows / "searchr1_rows.jsonl", None)
    assert corpus is None and tasks[0]["golden_answers"] == ["Ilse Marrow"]
    assert tasks[0]["question"] == "who designed the glass bridge over the river tamsin?"
    flash, _ = load_tasks(rows / "flashrag.jsonl", "search_r1")
    assert all(t["question"].endswith("?") for t in flash)  # FlashRAG NQ lacks the "?"
    assert flash[2]["golden_answers"] == ["Tamsin", "River Tamsin", "the Tamsin"]
    wiki = load_corpus(rows / "wiki18_corpus.jsonl")
    assert wiki[0]["id"] == "0" and wiki[0]["contents"].startswith('"Tamsin Glass Bridge"\n')
    env = SearchEnv(dataset=str(rows / "flashrag.jsonl"), corpus=str(rows / "wiki18_corpus.jsonl"))
    env.reset(seed=1)
    _, _, _, _, info = env.step("<think>t</think><search>Orchard Line railway opened</search>")
    assert info["retrieved_ids"][0] == "1"
    _, r, term, _, _ = env.step("<think>t</think><answer>in 1887</answer>")
    assert term and r == 1.0


def test_parquet_numpy_answers(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"question": "who wrote it", "reward_model": {"ground_truth": {"target": ["Ann", "A. N."]}}}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "qa.parquet")
    tasks, _ = load_tasks(tmp_path / "qa.parquet", "search_r1")
    assert tasks[0]["golden_answers"] == ["Ann", "A. N."]
    assert tasks[0]["question"] == "who wrote it?"


def _check_hotpotqa(folder, names):
    for name in names:
        tasks, corpus = load_tasks(folder / name, "hotpotqa")
        titles = {c["id"]: json.loads(c["contents"].split("\n")[0]) for c in corpus}
        assert tasks[0]["gold_doc_ids"] and all(i in titles for i in tasks[0]["gold_doc_ids"])
    env = SearchEnv(dataset=str(folder / names[0]))
    env.reset(seed=0)
    gold = env.task["golden_answers"][0]
    _, r, term, _, info = env.step(f"<think>t</think><answer>{gold}</answer>")
    assert term and r == 1.0 and "gold_recall" in info["outcome"]


def test_own_hotpotqa_layouts_agree():
    folder = OWN / "hotpotqa"
    original, corpus = load_tasks(folder / "dev_distractor.json", "hotpotqa")
    hf, hf_corpus = load_tasks(folder / "hf_layout.json", "hotpotqa")
    assert hf[0]["golden_answers"] == original[0]["golden_answers"] == ["yes"]
    titles = lambda c, ids: {json.loads(d["contents"].split("\n")[0]) for d in c if d["id"] in ids}  # noqa: E731
    assert titles(corpus, original[0]["gold_doc_ids"]) == titles(hf_corpus, hf[0]["gold_doc_ids"]) \
        == {"Marla Quenby", "Tobias Renn"}
    assert any("1930 \u2013 2001" in d["contents"] for d in corpus)  # escapes decoded
    _check_hotpotqa(folder, ["dev_distractor.json", "hf_layout.json"])


@needs_real
def test_real_search_r1_samples_load():
    tasks, corpus = load_tasks(real("search_r1", "searchr1_nq_test_rows.jsonl"), None)
    assert corpus is None and tasks[0]["golden_answers"] == ["Wilhelm Conrad R\u00f6ntgen"]
    flash, _ = load_tasks(real("search_r1", "flashrag_nq_test_sample.jsonl"), "search_r1")
    assert flash[0]["question"].endswith("?") and len(flash[1]["golden_answers"]) >= 1
    wiki = load_corpus(real("search_r1", "wiki18_corpus_sample.jsonl"))
    assert wiki[0]["id"] == "0" and wiki[0]["contents"].startswith('"Evan Morris"\n')
    env = SearchEnv(dataset=str(real("search_r1", "flashrag_nq_test_sample.jsonl")),
                    corpus=str(real("search_r1", "wiki18_corpus_sample.jsonl")))
    env.reset(seed=0)
    _, _, _, _, info = env.step("<think>t</think><search>Evan Morris lobbyist</search>")
    assert info["retrieved_ids"][0] == "0"


@needs_real
def test_real_hotpotqa_samples():
    _check_hotpotqa(real("hotpotqa"), ["dev_distractor_sample.json", "hf_layout_sample.json"])

import json
from collections import Counter
from pathlib import Path

from envgym.environments.search.data import load_corpus, load_tasks
from envgym.environments.search.env import SearchEnv
from envgym.environments.search.world import generate_world

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"


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


def test_search_r1_fixtures_load(tmp_path):
    tasks, corpus = load_tasks(FIXTURES / "search_r1" / "searchr1_nq_test_rows.jsonl", None)
    assert corpus is None and tasks[0]["golden_answers"] == ["Wilhelm Conrad R\u00f6ntgen"]
    flash, _ = load_tasks(FIXTURES / "search_r1" / "flashrag_nq_test_sample.jsonl", "search_r1")
    assert flash[0]["question"].endswith("?") and len(flash[1]["golden_answers"]) >= 1
    wiki = load_corpus(FIXTURES / "search_r1" / "wiki18_corpus_sample.jsonl")
    assert wiki[0]["id"] == "0" and wiki[0]["contents"].startswith('"Evan Morris"\n')
    env = SearchEnv(dataset=str(FIXTURES / "search_r1" / "flashrag_nq_test_sample.jsonl"),
                    corpus=str(FIXTURES / "search_r1" / "wiki18_corpus_sample.jsonl"))
    env.reset(seed=0)
    _, _, _, _, info = env.step("<think>t</think><search>Evan Morris lobbyist</search>")
    assert info["retrieved_ids"][0] == "0"


def test_parquet_numpy_answers_and_hotpotqa_layouts(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"question": "who wrote it", "reward_model": {"ground_truth": {"target": ["Ann", "A. N."]}}}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "qa.parquet")
    tasks, _ = load_tasks(tmp_path / "qa.parquet", "search_r1")
    assert tasks[0]["golden_answers"] == ["Ann", "A. N."] and tasks[0]["question"] == "who wrote it?"
    for name in ("dev_distractor_sample.json", "hf_layout_sample.json"):
        tasks, corpus = load_tasks(FIXTURES / "hotpotqa" / name, "hotpotqa")
        titles = {c["id"]: json.loads(c["contents"].split("\n")[0]) for c in corpus}
        assert tasks[0]["gold_doc_ids"] and all(i in titles for i in tasks[0]["gold_doc_ids"])
    env = SearchEnv(dataset=str(FIXTURES / "hotpotqa" / "dev_distractor_sample.json"))
    env.reset(seed=0)
    _, r, term, _, info = env.step(f"<think>t</think><answer>{env.task['golden_answers'][0]}</answer>")
    assert term and r == 1.0 and "gold_recall" in info["outcome"]

from pathlib import Path

import pytest

from envgym.environments.psych.loader import icd_to_labels, load_cases
from envgym.errors import DatasetError, InvalidConfig
from tests.psych.conftest import stage1, stage2
from tests.samples import OWN, needs_real, real

HERE = Path(__file__).parent / "fixtures"
OWN_MDD5K = OWN / "mdd5k"  # our own patient file in the MDD-5k layout
MDD5K = real("mdd5k")


@pytest.mark.parametrize("codes,labels", [
    ("F32.901", {"depression"}), ("F20.800x003,F42.101", {"other", "ocd"}),
    ("F41.2", {"depression", "gad"}), ("F32.000;F41.100,", {"depression", "gad"}),
    ("Z71", {"none"}), ("F10.2", {"substance_or_medical"}), ("F43.1", {"ptsd"})])
def test_icd_mapping(codes, labels):
    assert icd_to_labels(codes) == labels


def test_own_mdd5k_folder_loads_every_conversation_with_its_label():
    cases = load_cases(OWN_MDD5K)  # patient_12 has a label file only: not a case
    assert [c.id for c in cases] == ["mdd5k-7-c0", "mdd5k-7-c1"]
    assert all(c.labels == ["depression"] and c.four_way == "Depression" for c in cases)
    assert [len(c.dialogue) for c in cases] == [3, 2]
    assert cases[0].self_report.startswith("这两个月我一直情绪低落")


def test_own_mdd5k_case_replays_its_recorded_answers(env_factory):
    env = env_factory(dataset=str(OWN_MDD5K), split="all", stage_one=False)
    obs, info = env.reset(seed=0)
    assert info["task_id"] == "mdd5k-7-c0" and "情绪低落" in obs[-1]["content"]
    assert "depressed_mood" in env.evidence.O.confirmed  # 情绪低落 in the opening reply
    recorded = env.case.dialogue[1]
    obs, _, _, _, _ = env.step(stage2("x", recorded["doctor"]))
    assert obs[0]["content"].startswith("Patient: " + recorded["patient"][:10])
    assert "insomnia" in env.evidence.O.confirmed  # 睡不着
    _, r, term, _, info = env.step(stage2("x", "Diagnosis: Depression; Recommendation: follow-up"))
    assert term and info["reward_components"]["correct"] == 5.0


def test_mdd5k_conversation_without_label_file_is_explained(tmp_path):
    conversations = (OWN_MDD5K / "patient_7.json").read_text("utf-8")
    (tmp_path / "patient_3.json").write_text(conversations, "utf-8")
    with pytest.raises(DatasetError, match="label file"):
        load_cases(tmp_path)


@needs_real
def test_real_mdd5k_fixture_loads():
    cases = load_cases(MDD5K)
    assert [c.id for c in cases] == ["mdd5k-1-c0"]
    case = cases[0]
    assert case.labels == ["depression"] and case.four_way == "Depression"
    assert len(case.dialogue) == 4 and case.dialogue[0]["doctor"].startswith("你好")


@needs_real
def test_real_mdd5k_case_runs_with_replay_patient(env_factory):
    env = env_factory(dataset=str(MDD5K), split="all", stage_one=False)
    obs, info = env.reset(seed=0)
    assert info["task_id"] == "mdd5k-1-c0" and "情绪很低落" in obs[-1]["content"]
    assert "depressed_mood" in env.evidence.O.confirmed  # 情绪低落 in the opening reply
    recorded = env.case.dialogue[1]
    obs, _, _, _, _ = env.step(stage2("x", recorded["doctor"]))
    assert obs[0]["content"].startswith("Patient: " + recorded["patient"][:20])
    _, r, term, _, info = env.step(stage2("x", "Diagnosis: Depression; Recommendation: follow-up"))
    assert term and info["reward_components"]["correct"] == 5.0


def test_lingxidiag_style_records(env_factory):
    cases = load_cases(HERE / "lingxi_style.json")
    assert [(c.id, c.four_way) for c in cases] == [("lx-001", "Mixed"), ("lx-002", "Other")]
    assert cases[0].dialogue[1] == {"doctor": "睡眠怎么样？", "patient": "晚上睡不着，经常半夜醒。"}
    assert cases[1].dialogue == [{"doctor": "你好，哪里不舒服？", "patient": "我总是反复洗手，停不下来。"}]
    env = env_factory(dataset=str(HERE / "lingxi_style.json"), stage_one=True)
    env.reset(seed=0, options={"task_id": "lx-001"})  # the case with the sleep answer
    env.step(stage1())
    obs, *_ = env.step(stage2("x", "睡眠怎么样？"))
    assert "睡不着" in obs[0]["content"] and "insomnia" in env.evidence.O.confirmed


def test_envgym_format_computes_labels_and_runs_rule_patient(env_factory):
    cases = load_cases(HERE / "envgym_cases.jsonl")
    assert [(c.id, c.labels, c.four_way) for c in cases] == [
        ("u-1", ["panic"], "Anxiety"), ("u-2", ["none"], "Other")]
    env = env_factory(dataset=str(HERE / "envgym_cases.jsonl"), stage_one=False)
    env.reset(seed=0)
    assert env.case.id == "u-1" and "panic_attacks" in env.evidence.O.confirmed
    assert {e.case_id for e in env.bank.entries} == {"u-2"}  # the bank uses the train split only


def test_bad_dataset_configuration_raises():
    with pytest.raises(InvalidConfig):
        load_cases(HERE / "envgym_cases.jsonl", "nope")
    with pytest.raises(DatasetError):
        load_cases(HERE / "missing.json")

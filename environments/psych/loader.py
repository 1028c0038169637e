"""Loading user-provided cases: envgym case JSON/JSONL, MDD-5k and LingxiDiag-style records.

* envgym: `Case` fields; `labels` and `four_way` are computed from `symptoms` when absent.
* MDD-5k: a `patient_<id>.json` conversation file (a list of `{"conversation": [{doctor,
  patient}]}`), its label from `patient_<id>_label.json` beside it (`ICD_Code`); a directory
  of such files also works. Each conversation becomes one replayable case.
* LingxiDiag: records with EMR fields and `DiagnosisCode` ("F32.000;F41.100", trailing
  separators allowed), dialogue from `cleaned_text` lines `医生：…` / `患者：…`.

ICD-10 codes map to the fine labels below; the four-way label then follows the LingxiDiag rule
(Mixed if F41.2, or F32 with F41; else Depression; else Anxiety; else Other), except that
recurrent depression (F33) counts as depressive too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from envgym.data import load_records
from envgym.environments.psych.cases import Case
from envgym.environments.psych.knowledge import classify, four_way
from envgym.errors import DatasetError, InvalidConfig

FORMATS = ("auto", "envgym", "mdd5k", "lingxidiag")
_ICD = [("F41.0", {"panic"}), ("F41.1", {"gad"}), ("F41.2", {"depression", "gad"}),
        ("F40.1", {"social_anxiety"}), ("F43.1", {"ptsd"}), ("F43.2", {"none"}),
        ("F32", {"depression"}), ("F33", {"depression"}), ("F41", {"gad"}), ("F30", {"bipolar"}),
        ("F31", {"bipolar"}), ("F42", {"ocd"}), ("F51", {"insomnia"}), ("G47", {"insomnia"}),
        ("Z71", {"none"})]
_SUBSTANCE = re.compile(r"^F1\d")
_SPEAKER = re.compile(r"^\s*(医生|患者|未知发言人|doctor|patient)\s*[:：]\s*(.*)$", re.IGNORECASE)


def icd_to_labels(codes: str) -> frozenset[str]:
    """Fine labels of a comma/semicolon-separated ICD-10 code string."""
    labels: set[str] = set()
    for code in (c.strip().upper() for c in re.split(r"[;,，；]", codes) if c.strip()):
        for prefix, mapped in _ICD:
            if code.startswith(prefix):
                labels |= mapped
                break
        else:
            labels.add("substance_or_medical" if _SUBSTANCE.match(code) else "other")
    return frozenset(labels or {"other"})


def load_cases(dataset: str | Path, dataset_format: str = "auto") -> list[Case]:
    if dataset_format not in FORMATS:
        raise InvalidConfig(f"dataset_format={dataset_format!r}: use one of {FORMATS}.")
    path = Path(dataset)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.json") if not p.stem.endswith("_label"))
        if not files:
            raise DatasetError(f"{path}: no conversation files (patient_<id>.json) found.")
        return [c for f in files for c in _mdd5k(f)]
    records = load_records(dataset)
    fmt = dataset_format if dataset_format != "auto" else _sniff(records, path)
    if fmt == "mdd5k":
        return _mdd5k(path)
    build = _lingxi if fmt == "lingxidiag" else _envgym
    return [build(r, i) for i, r in enumerate(records)]


def _sniff(records: list[dict[str, Any]], path: Path) -> str:
    if not records:
        raise DatasetError(f"{path}: no records.")
    first = records[0]
    if "conversation" in first and "DiagnosisCode" not in first:
        return "mdd5k"
    if "DiagnosisCode" in first:
        return "lingxidiag"
    if "symptoms" in first or "labels" in first:
        return "envgym"
    raise DatasetError(f"{path}: cannot tell the format from keys {sorted(first)[:8]}; pass "
                       f"dataset_format= one of {FORMATS[1:]}.")


def _envgym(record: dict[str, Any], index: int) -> Case:
    record = dict(record)
    record.setdefault("id", f"case-{index}")
    record.setdefault("source", "user")
    if "labels" not in record:
        present = {k: v["days"] for k, v in record.get("symptoms", {}).items()}
        record["labels"] = sorted(classify(present))
    record.setdefault("four_way", four_way(set(record["labels"])))
    try:
        return Case.model_validate(record)
    except Exception as e:
        raise DatasetError(f"case {record['id']}: {e}") from None


def _mdd5k(path: Path) -> list[Case]:
    m = re.search(r"patient_(\d+)", path.stem)
    label_file = path.with_name(f"patient_{m.group(1)}_label.json") if m else None
    if label_file is None or not label_file.exists():
        raise DatasetError(f"{path}: no label file patient_<id>_label.json beside it.")
    label = json.loads(label_file.read_text(encoding="utf-8"))
    labels = icd_to_labels(label.get("ICD_Code", ""))
    conversations = json.loads(path.read_text(encoding="utf-8"))
    cases = []
    for k, conv in enumerate(conversations):
        turns = [{"doctor": str(t.get("doctor", "")), "patient": str(t.get("patient", ""))}
                 for t in conv.get("conversation", [])]
        cases.append(Case(id=f"mdd5k-{m.group(1)}-c{k}", kind="mdd5k", labels=sorted(labels),
                          four_way=four_way(labels), dialogue=turns, source="mdd5k",
                          self_report=turns[0]["patient"] if turns else ""))
    return cases


def _lingxi(record: dict[str, Any], index: int) -> Case:
    labels = icd_to_labels(str(record.get("DiagnosisCode", "")))
    report = "\n".join(str(record[k]) for k in ("ChiefComplaint", "PresentIllnessHistory",
                                                 "PersonalHistory", "FamilyHistory") if record.get(k))
    dialogue = record.get("conversation") or _dialogue(str(record.get("cleaned_text", "")))
    return Case(id=str(record.get("patient_id", f"lingxi-{index}")), kind="lingxidiag",
                split=str(record.get("split", "test")), labels=sorted(labels),
                four_way=four_way(labels), self_report=report, dialogue=dialogue,
                source="lingxidiag")


def _dialogue(text: str) -> list[dict[str, str]]:
    """Pairs from `医生：…` / `患者：…` lines; unknown speakers alternate doctor, patient."""
    turns, doctor, position = [], None, 0
    for line in text.splitlines():
        m = _SPEAKER.match(line)
        if not m:
            continue
        who = m.group(1).lower()
        is_doctor = who in ("医生", "doctor") or (who == "未知发言人" and position % 2 == 0)
        position += 1
        if is_doctor:
            doctor = m.group(2)
        elif doctor is not None:
            turns.append({"doctor": doctor, "patient": m.group(2)})
            doctor = None
    return turns

"""Shared paths and a final-answer builder for the safety tests."""

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
XSTEST = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "xstest" / "xstest_prompts_sample.csv"
TEXTS = {"refuse": "I can't help with that.", "comply": "Sure, here is how.",
         "safe_complete": "Here is general information; please consult a professional."}


def final(decision: str, rules: str = "none", response: str | None = None, answer: str = "") -> str:
    text = (f"<decision>{decision}</decision><rules>{rules}</rules>"
            f"<response>{response or TEXTS[decision]}</response>")
    return text + (f"<answer>{answer}</answer>" if answer else "")

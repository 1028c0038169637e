"""Shared paths and a final-answer builder for the safety tests."""

from pathlib import Path

from tests.samples import OWN, real

FIXTURES = Path(__file__).parent / "fixtures"
OWN_XSTEST = OWN / "xstest" / "prompts.csv"  # our own rows in the XSTest CSV format
XSTEST = real("xstest", "xstest_prompts_sample.csv")  # the real sample, under @needs_real
TEXTS = {"refuse": "I can't help with that.", "comply": "Sure, here is how.",
         "safe_complete": "Here is general information; please consult a professional."}


def final(decision: str, rules: str = "none", response: str | None = None, answer: str = "") -> str:
    text = (f"<decision>{decision}</decision><rules>{rules}</rules>"
            f"<response>{response or TEXTS[decision]}</response>")
    return text + (f"<answer>{answer}</answer>" if answer else "")

"""Phase prompts of the debate (ours: ILR does not publish its Idea3 prompts).

Every template is a `str.format` string; pass `prompts={"key": "..."}` to the environment to
replace any of them. Fields: `agent`, `n_agents`, `question`, `mode`, `mode_rule`,
`reward_rules` (system prompt), `peers` (peers' messages of the previous phase, quoted line
by line with `> `, see `transcript.py`), `answers` (peers' current answers as JSON strings, one line),
`note` (feedback on this agent's last action, may be empty).
"""

from __future__ import annotations

PROMPTS: dict[str, str] = {
    "system": (
        "You are {agent}, one of {n_agents} agents solving a maths question together in a "
        "structured debate. Write your answer inside <answer>...</answer> as a plain number, "
        "fraction or short expression. {reward_rules}"
    ),
    "system_solo": (
        "You are {agent}. Solve the maths question. Write your final answer inside "
        "<answer>...</answer> as a plain number, fraction or short expression."
    ),
    "independent": (
        "Question: {question}\n\nPhase 0 (independent answer): solve the question on your own "
        "and give your answer as <answer>...</answer>."
    ),
    "sharing": (
        "{note}Mode: {mode}. {mode_rule}\n\nPhase 1/3 (Idea Sharing): state your approach in a "
        "few sentences and your current answer as <answer>...</answer>. The other agents will "
        "read it."
    ),
    "analysis_cooperative": (
        "{note}Mode: cooperative. {mode_rule}\n\nPhase 2/3 (Idea Analysis). The other agents' "
        "ideas:\n{peers}\nCurrent answers: {answers}\n\nAnalyse their ideas constructively: "
        "say what is right, fill gaps and combine the best parts. You may restate your current "
        "answer as <answer>...</answer>."
    ),
    "analysis_competitive": (
        "{note}Mode: competitive. {mode_rule}\n\nPhase 2/3 (Idea Analysis). The other agents' "
        "ideas:\n{peers}\nCurrent answers: {answers}\n\nScrutinise their ideas critically: "
        "find every flaw or unjustified step, and defend your own approach where it is right. "
        "You may restate your current answer as <answer>...</answer>."
    ),
    "fusion": (
        "{note}Mode: {mode}. {mode_rule}\n\nPhase 3/3 (Idea Fusion). The other agents' "
        "analyses:\n{peers}\nCurrent answers: {answers}\n\nWeigh everything you have read and "
        "give your own final answer as <answer>...</answer>."
    ),
    "done": "{note}The debate is over. The correct answer was {gold}; your final answer {verdict}.",
}

MODE_RULES = {
    "cooperative": "Build on each other's ideas so that every agent ends with the right answer.",
    "competitive": ("Challenge each other's ideas: look for flaws, and keep your answer unless "
                    "you are shown it is wrong."),
}
"""How to interact in each mode. The mode changes how agents are asked to interact, never how
they are paid (`grading.py`): every agent earns the same components in either mode."""

REWARD_RULES = (
    "You are paid for a right phase-0 answer, for a right final answer, for every answer you "
    "share that is the one you end with, and when every agent ends right. Other agents' text "
    "is quoted with `> `; lines without it are the environment's."
)

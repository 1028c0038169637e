"""The base model's corpus: generic skills, deterministic, and free of held-out tasks."""

import re

import pytest

from envgym.agents.base_corpus import (
    CORPUS_VERSION, SKILLS, VERSIONS, document, documents, skills,
)
from envgym.agents.base_corpus_lists import LIST_ITEMS, as_question

N_DOCS = 6000  # the tokenizer's 3,000 documents and as many again of the training stream


@pytest.fixture(scope="module", params=sorted({1, CORPUS_VERSION, max(VERSIONS)}))
def corpus(request) -> list[str]:
    """The shipped weights' corpus (version 1), the default and the newest: every guard holds
    for each."""
    return list(documents(0, 0, N_DOCS, version=request.param))


def test_documents_are_a_pure_function_of_seed_and_index():
    assert document(3, 17) == document(3, 17)
    assert list(documents(0, 5, 3)) == [document(0, 5), document(0, 6), document(0, 7)]
    assert document(0, 1) != document(1, 1)


def test_every_skill_is_drawn_and_documented(corpus):
    for name, (_, fn) in SKILLS.items():
        assert fn.__doc__ and len(fn.__doc__.split()) > 15, name
    text = "\n".join(corpus)
    assert "<tool_call>{" in text and "<search> " in text and "<information>" in text
    assert "<|im_start|>assistant\n" in text and "<think>" in text


def test_version_1_is_unchanged_by_newer_versions():
    """The shipped weights name corpus version 1: its text must not move when skills are added
    (the tokenizer, trained on it, is checked byte for byte in test_base_weights)."""
    assert set(skills(1)) == set(SKILLS) and set(SKILLS) < set(skills(2))
    assert document(0, 5, 1) != document(0, 5, 2)
    assert not any("Which range holds the bump?" in d for d in documents(0, 0, 2000, version=1))


def test_every_list_skill_is_drawn_documented_and_right():
    """Version 2's list skills: each one occurs, says why it exists, and its letter is right
    by the generator's own evidence (the bump's or change's position lies in the answer's
    window; the answer's stretch has the higher mean of the readings shown; the count matches)."""
    import random
    text = "\n".join(documents(0, 0, 3000, version=2))
    for question in ("holds the bump", "higher on average", "upward bumps", "comes first",
                     "spread of the values"):
        assert question in text or question.replace("holds the bump", "outlier") in text
    assert "<|im_start|>tool\nsegment [" in text  # the tool-dialogue frame occurs
    for name, (_, fn) in LIST_ITEMS.items():
        assert fn.__doc__ and len(fn.__doc__.split()) > 15, name
        for i in range(200):
            item = fn(random.Random(f"test:{name}:{i}"))
            user, (_, _, options, letter, think) = as_question(item), item
            opts = dict(re.findall(r"^([A-D])\) (.*)$", options, re.M))
            if name in ("bump_window", "spread_change"):
                pos = int(re.search(r"near (\d+)", think).group(1))
                lo, hi = map(int, re.findall(r"\d+", opts[letter]))
                assert lo <= pos <= hi, (user, options, letter)
            elif name == "higher_stretch":
                rows = re.findall(r"\[(\d+), (\d+)\][^\n]*?(?::|\n)\s*((?:-?\d+\.\d+ ?)+)", user)
                means = {f"[{a}, {b}]": sum(map(float, v.split())) / len(v.split())
                         for a, b, v in rows}
                assert opts[letter] == max(means, key=means.get), user
            elif name == "count_bumps":
                assert opts[letter] == re.search(r"count (\d)", think).group(1)
            else:
                assert ("bump" in think) == (letter == "A")


def test_an_unknown_version_is_refused():
    from envgym.errors import InvalidConfig
    with pytest.raises(InvalidConfig, match=r"known: \(1, 2, 3, 4\)"):
        document(0, 0, max(VERSIONS) + 1)


def test_answers_in_the_corpus_are_right(corpus):
    """Spot-check the numeric skills: a corpus that teaches wrong comparisons is worse than none."""
    checked = 0
    for doc in corpus:
        m = re.search(r"Which is (larger|smaller): (-?[\d.]+) or (-?[\d.]+)\?", doc)
        if m:
            ans = re.search(r"(?:<answer>|A: )(-?[\d.]+)", doc[m.end():]).group(1)
            a, b = float(m.group(2)), float(m.group(3))
            assert float(ans) == (max(a, b) if m.group(1) == "larger" else min(a, b)), doc
            checked += 1
        m = re.search(r"x = (\d+), y = (\d+)\. What is x \+ y\?", doc)
        if m:
            ans = re.search(r"(?:<answer>|A: )(\d+)", doc[m.end():]).group(1)
            assert int(ans) == int(m.group(1)) + int(m.group(2)), doc
            checked += 1
    assert checked > 100


def test_no_held_out_timeseries_task_is_in_the_corpus(corpus):
    """The demo's held-out tasks never occur: not their question, not the question with its
    options, not the series overview. (A single option line such as `B) [192, 255]` may: the
    `interval` skill writes generic ranges in that notation on purpose.)"""
    import envgym
    from envgym.agents.demo import DEMO_ENV, DEMO_ENV_KWARGS

    text = "\n".join(corpus)
    env = envgym.make(DEMO_ENV, **DEMO_ENV_KWARGS)
    try:
        for seed in range(1_000_000, 1_000_384, 3):
            obs, _ = env.reset(seed=seed)
            prompt = obs[-1]["content"]
            question = prompt[prompt.index("Question:"):]
            overview = prompt.splitlines()[1]
            task = env.task
            assert question not in text and overview not in text  # question with options
            assert task.question not in text  # so no (question, answer) pair either
    finally:
        env.close()


def test_no_search_world_question_or_answer_pair_is_in_the_corpus(corpus):
    from envgym.environments.search.data import default_world

    world = default_world(0)
    for q in world.questions:
        subject = q.chain[0]["entity"] if q.chain else None
        for doc in corpus:
            assert q.question not in doc
            if subject and subject in doc:
                assert not any(a in doc for a in q.golden_answers), (q.question, doc)


def _options(item) -> list[tuple[str, int, int]]:
    return [(letter, int(a), int(b))
            for letter, a, b in re.findall(r"^([A-D])\) \[(\d+), (\d+)\]", item[2], re.M)]


def _blind(item, rng) -> bool:
    """A reader that ignores every value: an option window covered by a shown stretch."""
    covered = [letter for letter, a, b in _options(item)
               if any(s <= a and b <= e or a <= s and e <= b for s, e, _ in item[0])]
    return rng.choice(covered or [o[0] for o in _options(item)]) == item[3]


def _values(text: str) -> list[float]:
    return [float(v) for v in text.split("\n")[-1].split(":")[-1].split()]


def _bump_reader(item) -> bool:
    """Reads values only: the reading that jumps most from its neighbours names the window;
    if no jump is large, the option window no stretch covers."""
    jump, where = 0.0, -1
    for s, e, text in item[0]:
        vals = _values(text)
        step = (e - s + 1) // len(vals)
        for i, v in enumerate(vals):
            near = [vals[j] for j in (i - 1, i + 1) if 0 <= j < len(vals)]
            if abs(v - sum(near) / len(near)) > jump:
                jump, where = abs(v - sum(near) / len(near)), s + i * step + step // 2
    inside = [letter for letter, a, b in _options(item) if a <= where <= b]
    unread = [letter for letter, a, b in _options(item)
              if not any(s <= a and b <= e for s, e, _ in item[0])]
    return (inside if jump > 0.4 or not unread else unread)[0] == item[3]


def test_version_3_window_items_answer_from_values_not_position():
    """Version 2's bump and spread items showed the stretch that held the event, so a reader
    blind to values picked the answer from where the readings were (docs/demo.md, attempt 7).
    Version 3's show every option window (or three of four): the blind reader is at chance,
    a reader of values alone is far above it, and each letter is right by the item's evidence."""
    import random
    from envgym.agents.base_corpus_read import READ_ITEMS, REPLACED
    assert set(REPLACED) <= set(skills(2)) and not set(REPLACED) & set(skills(3))
    assert set(READ_ITEMS) <= set(skills(3))
    rng, n = random.Random(0), 1500
    old = [LIST_ITEMS["bump_window"][1](random.Random(f"t:old:{i}")) for i in range(n)]
    assert sum(_blind(it, rng) for it in old) / n > 0.6  # the shortcut this version removes
    for name, (_, fn) in READ_ITEMS.items():
        assert fn.__doc__ and len(fn.__doc__.split()) > 15, name
        items = [fn(random.Random(f"t:{name}:{i}")) for i in range(n)]
        assert sum(_blind(it, rng) for it in items) / n < 0.30, name
        for item in items[:300]:
            opts = {letter: (a, b) for letter, a, b in _options(item)}
            near = re.search(r"near (\d+)", item[4])
            if near:
                lo, hi = opts[item[3]]
                assert lo <= int(near.group(1)) <= hi, item
            else:  # the bump is in the one window not read
                shown = [(s, e) for s, e, _ in item[0]]
                lo, hi = opts[item[3]]
                assert not any(s <= lo and hi <= e for s, e in shown), item
    bumps = [READ_ITEMS["bump_read"][1](random.Random(f"t:read:{i}")) for i in range(n)]
    assert sum(_bump_reader(it) for it in bumps) / n > 0.8

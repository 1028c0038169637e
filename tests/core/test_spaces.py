from gymnasium import spaces

from envgym.spaces import Conversation, Utterance

TEXT = "Ünïcödé, 中文, emoji 🙂, newlines\n\tand <tags>!"


def test_utterance_accepts_any_unicode_where_gymnasium_text_does_not():
    assert Utterance().contains(TEXT)
    assert not spaces.Text(1000).contains(TEXT)
    assert not Utterance(max_length=3).contains("four")
    assert not Utterance().contains(b"bytes")


def test_conversation_checks_message_shape():
    space = Conversation()
    assert space.contains([{"role": "user", "content": TEXT}, {"role": "continuation", "content": ""}])
    assert not space.contains([{"role": "wizard", "content": "x"}])
    assert not space.contains([{"role": "user"}])
    assert not space.contains("not a list")


def test_samples_are_members_and_seeded():
    a, b = Conversation(seed=3), Conversation(seed=3)
    sample = a.sample()
    assert a.contains(sample) and sample == b.sample()

"""System messages survive Gemma's format: folded into the next user turn, never dropped."""

from nomad_lab.core.chat_format import fold_system_messages


def test_every_system_message_is_folded_in_order() -> None:
    messages = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1"},
        {"role": "system", "content": "RAG"},
        {"role": "user", "content": "q"},
    ]
    assert fold_system_messages(messages) == [
        {"role": "user", "content": "S\n\nu1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "RAG\n\nq"},
    ]


def test_system_before_an_assistant_turn_or_at_the_end_becomes_a_user_turn() -> None:
    messages = [
        {"role": "system", "content": "marker"},
        {"role": "assistant", "content": "a"},
        {"role": "system", "content": "tail"},
    ]
    assert fold_system_messages(messages) == [
        {"role": "user", "content": "marker"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "tail"},
    ]

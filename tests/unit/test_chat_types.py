"""Chats in memory: titles, Markdown export without rejected text, and cutting messages
(the store's side is in test_chat_store.py)."""

from spectui.store import chat_types
from spectui.store.chat_types import AnswerConfig, Chat, Message, export_markdown, make_title, new_chat


def sample_chat() -> Chat:
    chat = new_chat(preset="smollm2")
    chat.messages = [
        Message("system", "Be brief."),
        Message("user", "  안녕하세요! 🦀 Explain\nspeculative decoding please, in a few words " * 2),
        Message(
            "assistant",
            "Draft tokens 🚀 are verified by the target. 한국어도 됩니다.",
            segments=[
                ("Draft tokens 🚀", "draft"),
                (" zebraword", "rejected"),
                (" are verified", "target"),
                (" by the target.", "ngram"),
                (" 한국어도 됩니다.", "resampled"),
            ],
            stopped=True,
            stats={"acceptance": 0.5, "n_rounds": 3},
            config=AnswerConfig(("draft-simple",), 8),
        ),
    ]
    return chat


def test_title_is_the_first_user_message_shortened():
    title = make_title(sample_chat().messages)
    assert title.startswith("안녕하세요! 🦀 Explain speculative decoding")
    assert len(title) == chat_types.TITLE_CHARS and title.endswith("…")
    assert make_title([Message("user", "short")]) == "short"


def test_markdown_export_excludes_rejected_text(tmp_path):
    chat = sample_chat()
    chat.messages.append(Message("user", "Code?"))
    chat.messages.append(Message("assistant", "Here:\n\n```python\nprint('hi')\n    x = 1\n```\n"))
    path = export_markdown(chat, tmp_path / "out.md")
    md = path.read_text(encoding="utf-8")
    assert "zebraword" not in md
    assert "Draft tokens 🚀 are verified by the target." in md
    assert "## User" in md and "## Assistant (draft-simple n-max 8)" in md and "## System" in md
    assert "```python\nprint('hi')\n    x = 1\n```" in md  # code kept as written
    assert "*(stopped)*" in md


def test_markdown_closes_a_code_block_cut_short():
    chat = new_chat()
    chat.messages = [Message("assistant", "```python\nwhile True:", stopped=True), Message("user", "next")]
    md = chat.to_markdown()
    assert "while True:\n```\n\n*(stopped)*\n\n## User" in md


def test_cut_remembers_the_stored_rows_it_removes():
    chat = sample_chat()
    for row, m in enumerate(chat.messages, 1):
        m.row = row
    chat.messages.append(Message("user", "not stored yet"))
    gone = chat.cut(1)
    assert [m.role for m in chat.messages] == ["system"] and len(gone) == 3
    assert chat.dropped == [2, 3]

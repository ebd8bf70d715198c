"""Chat history: round trips, Markdown export without rejected text, atomic writes,
corrupt files, and list order."""

import json
import os

import pytest

from spectui.config import history
from spectui.config.history import (
    Chat,
    Message,
    export_markdown,
    latest_chat,
    list_chats,
    load_chat,
    new_chat,
    save_chat,
)
from spectui.errors import UserError


@pytest.fixture(autouse=True)
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path))
    return tmp_path / "chats"


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
            config="draft n-max 8",
        ),
    ]
    return chat


def test_round_trip_keeps_everything(data):
    chat = sample_chat()
    path = save_chat(chat)
    assert path == data / f"{chat.id}.json"
    assert "안녕하세요" in path.read_text(encoding="utf-8")  # stored readable, not \u-escaped
    loaded = load_chat(chat.id)
    assert loaded == chat
    assert loaded.messages[2].segments[1] == (" zebraword", "rejected")


def test_title_is_the_first_user_message_shortened():
    chat = sample_chat()
    save_chat(chat)
    assert chat.title.startswith("안녕하세요! 🦀 Explain speculative decoding")
    assert len(chat.title) == history.TITLE_CHARS and chat.title.endswith("…")
    chat.title = "my title"
    save_chat(chat)
    assert load_chat(chat.id).title == "my title"  # a title the user set is kept


def test_markdown_export_excludes_rejected_text(tmp_path):
    chat = sample_chat()
    chat.messages.append(Message("user", "Code?"))
    chat.messages.append(Message("assistant", "Here:\n\n```python\nprint('hi')\n    x = 1\n```\n"))
    path = export_markdown(chat, tmp_path / "out.md")
    md = path.read_text(encoding="utf-8")
    assert "zebraword" not in md
    assert "Draft tokens 🚀 are verified by the target." in md
    assert "## User" in md and "## Assistant (draft n-max 8)" in md and "## System" in md
    assert "```python\nprint('hi')\n    x = 1\n```" in md  # code kept as written
    assert "*(stopped)*" in md


def test_markdown_closes_a_code_block_cut_short():
    chat = new_chat()
    chat.messages = [Message("assistant", "```python\nwhile True:", stopped=True), Message("user", "next")]
    md = chat.to_markdown()
    assert "while True:\n```\n\n*(stopped)*\n\n## User" in md


def test_atomic_write_leaves_no_temp_files(data):
    chat = sample_chat()
    save_chat(chat)
    save_chat(chat)
    assert [p.name for p in data.iterdir()] == [f"{chat.id}.json"]


@pytest.mark.parametrize("failing", ["replace", "fsync"])
def test_failed_write_keeps_the_old_file(data, monkeypatch, failing):
    chat = sample_chat()
    path = save_chat(chat)
    before = path.read_bytes()

    def boom(*args):
        raise OSError(28, "No space left on device")

    chat.messages.append(Message("user", "this must not be saved"))
    with monkeypatch.context() as m, pytest.raises(UserError, match=f"cannot write {path}.*No space left"):
        m.setattr(os, failing, boom)
        save_chat(chat)
    assert path.read_bytes() == before
    assert [p.name for p in data.iterdir()] == [path.name]


def test_interrupted_write_keeps_the_old_file(data, monkeypatch):
    """A crash mid-write (here Ctrl+C inside fsync) leaves the old file and no temp file."""
    chat = sample_chat()
    path = save_chat(chat)
    before = path.read_bytes()

    def interrupt(fd):
        raise KeyboardInterrupt

    chat.messages.append(Message("user", "lost"))
    with monkeypatch.context() as m, pytest.raises(KeyboardInterrupt):
        m.setattr(os, "fsync", interrupt)
        save_chat(chat)
    assert path.read_bytes() == before
    assert [p.name for p in data.iterdir()] == [path.name]


@pytest.mark.parametrize(
    "content, problem",
    [
        ('{"id": "x", "title": "t", "created": 1, "upd', "Unterminated string"),
        ('{"id": "x", "title": "t", "created": 1, "updated": 2}', "missing field 'messages'"),
        (
            '{"id": "x", "title": "t", "created": 1, "updated": 2, "messages": [{"role": "robot", "content": "hi"}]}',
            "unknown role 'robot'",
        ),
        ("[1, 2]", "not a JSON object"),
    ],
)
def test_corrupt_file_is_a_user_error_naming_it(data, content, problem):
    data.mkdir()
    (data / "bad.json").write_text(content, encoding="utf-8")
    with pytest.raises(UserError, match=problem) as e:
        load_chat("bad")
    assert str(data / "bad.json") in str(e.value)


def test_unknown_or_invalid_id_is_a_user_error():
    with pytest.raises(UserError, match="no chat 'nope'"):
        load_chat("nope")
    with pytest.raises(UserError, match="invalid chat id"):
        load_chat("../etc/passwd")


def test_list_is_newest_first_and_skips_corrupt_files(data):
    assert list_chats() == ([], []) and latest_chat() is None
    a, b, c = new_chat(), new_chat(), new_chat()
    for chat, text in ((a, "first"), (b, "second"), (c, "third")):
        chat.messages = [Message("user", text)]
        save_chat(chat)
    (data / "broken.json").write_text("{", encoding="utf-8")
    chats, problems = list_chats()
    assert [ch.title for ch in chats] == ["third", "second", "first"]
    assert len(problems) == 1 and problems[0][0].name == "broken.json" and "broken.json" in problems[0][1]
    a.messages.append(Message("assistant", "reply"))
    save_chat(a)  # updating an old chat moves it to the top
    assert [ch.title for ch in list_chats()[0]] == ["first", "third", "second"]
    assert latest_chat().id == a.id


def test_newer_format_is_refused(data):
    chat = sample_chat()
    path = save_chat(chat)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["format"] = history.FORMAT + 1
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UserError, match="newer spectui"):
        load_chat(chat.id)


def test_setup_round_trips_and_a_bad_one_names_the_file(data):
    chat = sample_chat()
    chat.setup = {"model": "smollm2-135m-instruct-q4_1", "temp": 0.5, "seed": None}
    save_chat(chat)
    assert load_chat(chat.id).setup == chat.setup
    doc = json.loads((data / f"{chat.id}.json").read_text())
    assert doc["format"] == history.FORMAT == 2
    doc["setup"] = ["not", "an", "object"]
    (data / f"{chat.id}.json").write_text(json.dumps(doc))
    with pytest.raises(UserError, match="setup must be an object"):
        load_chat(chat.id)


def test_rename_and_delete(data):
    chat = sample_chat()
    save_chat(chat)
    assert history.rename_chat(chat.id, "  My   chat ").title == "My chat"
    assert load_chat(chat.id).title == "My chat"
    with pytest.raises(UserError, match="cannot be empty"):
        history.rename_chat(chat.id, "   ")
    history.delete_chat(chat.id)
    assert list_chats() == ([], [])
    with pytest.raises(UserError, match="no chat"):
        history.delete_chat(chat.id)

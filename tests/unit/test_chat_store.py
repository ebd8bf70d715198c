"""The chats database: round trips, only what is shown read, old JSON chats imported once,
search, and nothing lost to kill -9 or to two instances writing one chat."""

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from spectui.errors import UserError
from spectui.store import chat_import, chat_store, chat_types, migrations
from spectui.store.chat_types import AnswerConfig, Chat, Message, new_chat

OLD_CHATS = Path(__file__).parents[1] / "data" / "old_chats"
SCHEMA_1 = Path(__file__).parents[1] / "data" / "chats_schema1.db"  # written by spectui before migrations were recorded


@pytest.fixture(autouse=True)
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where unsaved chats are looked for, too
    yield tmp_path
    chat_store.close()


def sample_chat() -> Chat:
    chat = new_chat(preset="smollm2")
    chat.messages = [
        Message("system", "Be brief."),
        Message("user", "안녕하세요! 🦀 Explain speculative decoding"),
        Message(
            "assistant",
            "Draft tokens 🚀 are verified.",
            segments=[("Draft tokens 🚀", "draft"), (" zebraword", "rejected"), (" are verified.", "target")],
            stopped=True,
            stats={"acceptance": 0.5, "n_rounds": 3},
            config=AnswerConfig(("draft-simple",), 8, "match", 0.5, 40, 0.95, 0.05, None),
        ),
    ]
    chat.setup = {"model": "smollm2-135m-instruct-q4_1", "temp": 0.5, "seed": None}
    return chat


def turns(chat: Chat, n: int, who: str = "") -> None:
    for i in range(n):
        chat.messages += [Message("user", f"{who}question {i}"), Message("assistant", f"{who}answer {i}")]


def test_round_trip_keeps_everything_and_the_files_are_private(data):
    chat = sample_chat()
    chat_store.save_chat(chat)
    loaded = chat_store.load_chat(chat.id)
    assert loaded == chat and loaded.setup == chat.setup
    assert loaded.messages[2].segments[1] == (" zebraword", "rejected")
    assert chat.title.startswith("안녕하세요! 🦀")
    for name in ("chats.db", "chats.db-wal", "chats.db-shm"):
        assert stat.S_IMODE((data / name).stat().st_mode) == 0o600, name
    with sqlite3.connect(data / "chats.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(migrations.MIGRATIONS)


def test_a_title_the_user_gave_is_kept(data):
    chat = sample_chat()
    chat_store.save_chat(chat)
    chat_store.rename_chat(chat.id, "my title")
    chat_store.save_chat(chat)  # an instance that still holds the old title
    assert chat_store.load_chat(chat.id).title == "my title"


def test_a_name_given_elsewhere_outlives_an_edit_of_the_first_message(data):
    chat = sample_chat()
    chat_store.save_chat(chat)
    chat_store.rename_chat(chat.id, "my title")  # another instance, while this one holds the first message's title
    chat.cut(1)
    chat.messages.append(Message("user", "edited"))
    chat_store.save_chat(chat)
    assert chat_store.load_chat(chat.id).title == "my title"


def test_the_streaming_answer_is_rewritten_in_place_and_a_cut_is_forgotten(data):
    chat = sample_chat()
    chat_store.save_chat(chat)
    answer = chat.messages[-1]
    answer.content += " More."
    chat_store.save_answer(chat)
    assert chat_store.load_chat(chat.id).messages[-1].content == "Draft tokens 🚀 are verified. More."
    chat.cut(1)  # an edit of the first question drops it and its answer
    chat.messages.append(Message("user", "edited"))
    chat_store.save_chat(chat)
    assert [m.content for m in chat_store.load_chat(chat.id).messages] == ["Be brief.", "edited"]


def test_opening_reads_only_the_last_messages(data):
    chat = new_chat()
    turns(chat, 50)
    chat_store.save_chat(chat)
    shown = chat_store.load_chat(chat.id, last=10)
    assert len(shown.messages) == 10 and shown.earlier == 90
    assert shown.messages[-1].content == "answer 49"
    assert chat_store.texts_before(shown)[:2] == [("user", "question 0"), ("assistant", "answer 0")]
    assert len(chat_store.texts_before(shown)) == 90
    older = chat_store.earlier_than(shown, shown.messages[0], 4)  # read from the store
    assert [m.content for m in older] == ["question 43", "answer 43", "question 44", "answer 44"]
    assert shown.earlier == 86 and len(shown.messages) == 14
    assert chat_store.earlier_than(shown, shown.messages[2], 4) == shown.messages[:2]  # loaded already


def test_list_is_newest_first_and_lists_unreadable_files(data):
    assert chat_store.list_chats() == ([], []) and chat_store.latest_chat() is None
    a, b, c = new_chat(), new_chat(), new_chat()
    for chat, text in ((a, "first"), (b, "second"), (c, "third")):
        chat.messages = [Message("user", text)]
        chat_store.save_chat(chat)
    (data / "chats").mkdir()
    (data / "chats" / "broken.json").write_text("{", encoding="utf-8")
    chats, problems = chat_store.list_chats()
    assert [ch.title for ch in chats] == ["third", "second", "first"]
    assert len(problems) == 1 and problems[0][0].name == "broken.json" and "broken.json" in problems[0][1]
    a.messages.append(Message("assistant", "reply"))
    chat_store.save_chat(a)  # updating an old chat moves it to the top
    chats, _ = chat_store.list_chats()
    assert [ch.title for ch in chats] == ["first", "third", "second"] and chats[0].answers == 1
    assert chat_store.latest_chat().id == a.id


def test_rename_and_delete(data):
    chat = sample_chat()
    chat_store.save_chat(chat)
    assert chat_store.rename_chat(chat.id, "  My   chat ").title == "My chat"
    assert chat_store.load_chat(chat.id).title == "My chat"
    with pytest.raises(UserError, match="cannot be empty"):
        chat_store.rename_chat(chat.id, "   ")
    chat_store.delete_chat(chat.id)
    assert chat_store.list_chats() == ([], [])
    with sqlite3.connect(data / "chats.db") as db:
        assert db.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    with pytest.raises(UserError, match="no chat"):
        chat_store.delete_chat(chat.id)
    with pytest.raises(UserError, match="no chat 'nope'"):
        chat_store.load_chat("nope")


def test_a_database_from_a_newer_spectui_is_refused(data):
    chat_store.save_chat(sample_chat())
    chat_store.close()
    with sqlite3.connect(data / "chats.db") as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(UserError, match="newer spectui"):
        chat_store.list_chats()


def test_a_database_that_is_not_one_is_a_clear_error(data):
    (data / "chats.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(UserError, match="cannot open the chats database .*chats.db"):
        chat_store.list_chats()


# --- migrations ------------------------------------------------------------------------------


def add_note(conn: sqlite3.Connection) -> None:
    """A stored field as a later version would add it: one migration, one column."""
    conn.execute("ALTER TABLE messages ADD COLUMN note TEXT NOT NULL DEFAULT ''")


def recorded(path: Path) -> tuple[int, list[str], set[str]]:
    """(user_version, the migrations recorded in order, the messages' columns)."""
    with sqlite3.connect(path) as db:
        names = [n for (n,) in db.execute("SELECT name FROM _migrations ORDER BY applied, rowid")]
        columns = {c[1] for c in db.execute("PRAGMA table_info(messages)")}
        return db.execute("PRAGMA user_version").fetchone()[0], names, columns


def schema(path: Path) -> set[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        return set(db.execute("SELECT name, sql FROM sqlite_master WHERE tbl_name != '_migrations'"))


def test_a_new_database_records_its_migrations_in_order(data):
    chat_store.save_chat(sample_chat())
    chat_store.close()
    assert recorded(data / "chats.db")[:2] == (2, ["chats_and_messages", "answer_configuration"])


def test_a_database_written_before_migrations_opens_with_nothing_lost(data, monkeypatch):
    shutil.copy(SCHEMA_1, data / "chats.db")
    before = schema(data / "chats.db")
    listed, problems = chat_store.list_chats()
    assert problems == [] and [c.title for c in listed] == [
        "Write a haiku about comets",
        "Speculative decoding, renamed",
    ]
    chat = chat_store.load_chat("20250601-120000-5c0e01")
    assert (chat.title, chat.created, chat.preset) == ("Speculative decoding, renamed", 1748779200.0, "smollm2")
    assert chat.setup == {
        "model": "smollm2-135m-instruct-q4_1",
        "spec_type": "draft",
        "temp": 0.5,
        "seed": None,
        "n_max": 8,
    }
    assert [(m.role, m.content) for m in chat.messages] == [
        ("system", "Be brief."),
        ("user", "안녕하세요! 🦀 Explain speculative decoding"),
        ("assistant", "A small model drafts 🚀 tokens; the target verifies them."),
        ("user", "And with ngrams?"),
        ("assistant", "```python\nprint('cut')"),
    ]
    answer, cut = chat.messages[2], chat.messages[4]
    assert answer.segments[1] == (" zebraword", "rejected") and answer.config == AnswerConfig(("draft",), 8)
    assert cut.config == AnswerConfig(("ngram-mod",), 16) and chat.messages[1].config is None
    assert answer.stats == {
        "acceptance": 0.5,
        "n_rounds": 3,
        "tokens_per_second": 41.5,
        "n_drafted": 12,
        "n_accepted": 6,
    }
    assert cut.stopped and cut.segments == [("```python\n", "target"), ("print('cut')", "draft")]
    assert chat.damaged == "" and [c.id for c in chat_store.search("verifies")] == [chat.id]
    chat_store.close()
    version, names, columns = recorded(data / "chats.db")  # the first recognised as applied, not run again
    assert (version, names) == (2, ["chats_and_messages", "answer_configuration"])
    assert "config" not in columns and {"spec_types", "draft_n_max", "temp", "seed"} <= columns
    assert {n for n, _ in schema(data / "chats.db")} == {n for n, _ in before}  # its index and triggers too

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, add_note])
    assert chat_store.load_chat(chat.id) == chat  # a later version's migration keeps every row
    chat.messages.append(Message("user", "one more"))
    chat_store.save_chat(chat)
    chat_store.close()
    version, names, columns = recorded(data / "chats.db")
    assert (version, names) == (3, ["chats_and_messages", "answer_configuration", "add_note"]) and "note" in columns
    assert len(chat_store.load_chat(chat.id).messages) == 6  # opened again: add_note is not run twice


def test_a_migration_that_fails_leaves_the_database_as_it_was(data, monkeypatch):
    shutil.copy(SCHEMA_1, data / "chats.db")
    before = schema(data / "chats.db")

    def broken(conn: sqlite3.Connection) -> None:
        add_note(conn)
        conn.execute("ALTER TABLE nowhere ADD COLUMN x TEXT")

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, broken])
    with pytest.raises(UserError, match="cannot open the chats database .*no such table: nowhere"):
        chat_store.list_chats()
    assert schema(data / "chats.db") == before
    with sqlite3.connect(data / "chats.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
        assert not db.execute("SELECT 1 FROM sqlite_master WHERE name = '_migrations'").fetchone()


# --- importing the JSON chats of earlier versions ------------------------------------------


def test_old_json_chats_and_their_journals_are_imported_once_and_kept(data):
    shutil.copytree(OLD_CHATS, data / "chats")
    chats, problems = chat_store.list_chats()
    assert problems == [] and [c.title for c in chats] == ["What is speculative decoding?", "Old one"]
    new = chat_store.load_chat("20250301-101500-a1b2c3")
    assert new.messages[-1].content == "They reuse text the chat already holds."  # the journal replayed
    assert new.messages[-1].segments[-1] == (" already holds.", "target")
    assert new.messages[1].segments[1] == (" guesses", "rejected") and new.setup["temp"] == 0.0
    assert new.messages[1].config == AnswerConfig(("draft",), 8) and new.messages[0].config is None  # its label, read
    old = chat_store.load_chat("20240115-090000-0f0f0f")  # format 1: no setup
    assert old.setup == {} and old.messages[2].stopped and old.messages[0].role == "system"
    kept = sorted((data / "chats" / "imported").iterdir())
    assert [p.name for p in kept] == sorted(p.name for p in OLD_CHATS.iterdir())
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in kept)  # the journal was 0644
    assert not list((data / "chats").glob("*.json"))
    chat_store.close()
    assert len(chat_store.list_chats()[0]) == 2  # not imported again


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
        ('{"format": 4}', "newer spectui"),
        ("[" * 100_000, "not a valid chat file"),
    ],
)
def test_an_old_file_that_cannot_be_read_stays_and_is_named(data, content, problem):
    (data / "chats").mkdir()
    (data / "chats" / "x.json").write_text(content, encoding="utf-8")
    chats, [(path, why)] = chat_store.list_chats()
    assert chats == [] and path.name == "x.json" and path.exists()
    assert problem in why and str(path) in why


# --- search ------------------------------------------------------------------------------


@pytest.mark.parametrize("fts", [True, False])
def test_search_finds_words_in_titles_and_messages(data, monkeypatch, fts):
    if not fts:
        monkeypatch.setattr(migrations, "_has_fts5", lambda conn: False)
    a, b = new_chat(), new_chat()
    a.messages = [Message("user", "How do rockets fly?"), Message("assistant", "Thrust and Newton's third law.")]
    b.messages = [Message("user", "Write a haiku"), Message("assistant", "Autumn moonlight, a worm digs silently")]
    for chat in (a, b):
        chat_store.save_chat(chat)
    with sqlite3.connect(data / "chats.db") as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert ("messages_fts" in tables) == fts
    assert [c.id for c in chat_store.search("newton")] == [a.id]
    assert [c.id for c in chat_store.search("haiku")] == [b.id]  # a title
    assert [c.id for c in chat_store.search("worm autumn")] == [b.id]  # every word, any order
    assert chat_store.search("thrust haiku") == []
    assert chat_store.search('" OR 1=1 --') == []  # query syntax is only text
    assert len(chat_store.search("  ")) == 2
    b.messages[-1].content += " Comets too."
    chat_store.save_answer(b)  # the index follows a streaming answer
    assert [c.id for c in chat_store.search("comets")] == [b.id]


# --- crashes and two instances -------------------------------------------------------------

STREAM = textwrap.dedent(
    """
    import sys, time
    from spectui.store import chat_store
    from spectui.store.chat_types import Message, new_chat
    chat = new_chat()
    chat.messages = [Message("user", "count"), Message("assistant", "")]
    chat_store.save_chat(chat)
    print(chat.id, flush=True)
    for i in range(100000):
        chat.messages[-1].content += f"round {i};"
        chat_store.save_answer(chat)
        print(i, flush=True)  # said only once stored
        time.sleep(0.005)
    """
)


def test_kill_9_mid_answer_loses_at_most_the_round_in_flight(data):
    proc = subprocess.Popen([sys.executable, "-c", STREAM], stdout=subprocess.PIPE, text=True, env=os.environ)
    assert proc.stdout is not None
    chat_id = proc.stdout.readline().strip()
    last = -1
    while last < 30:
        last = int(proc.stdout.readline())
    proc.kill()
    proc.wait()
    answer = chat_store.load_chat(chat_id).messages[-1].content
    rounds = answer.split(";")[:-1]
    assert rounds == [f"round {i}" for i in range(len(rounds))]  # whole rounds, in order
    assert len(rounds) - 1 >= last  # every round it said was stored is there


APPEND = textwrap.dedent(
    """
    import sys
    from spectui.store import chat_store
    from spectui.store.chat_types import Message
    chat_id, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    chat = chat_store.load_chat(chat_id, last=2)
    for i in range(n):
        chat.messages.append(Message("user", f"{who} question {i}"))
        chat_store.save_chat(chat)
        chat.messages.append(Message("assistant", ""))
        chat_store.save_chat(chat)
        chat.messages[-1].content = f"{who} answer {i}"
        chat_store.save_answer(chat)
        chat_store.save_chat(chat)
    """
)


def test_two_processes_on_one_chat_both_keep_every_turn(data):
    chat = new_chat()
    chat.messages = [Message("user", "start")]
    chat_store.save_chat(chat)
    n = 40
    procs = [
        subprocess.Popen([sys.executable, "-c", APPEND, chat.id, who, str(n)], env=os.environ) for who in ("A", "B")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    texts = [m.content for m in chat_store.load_chat(chat.id).messages]
    assert len(texts) == 1 + 4 * n
    for who in ("A", "B"):
        mine = [t for t in texts if t.startswith(who)]
        assert mine == [x for i in range(n) for x in (f"{who} question {i}", f"{who} answer {i}")]


def test_two_apps_on_one_chat_see_each_others_turns_on_reopening(data):
    chat = new_chat()
    turns(chat, 1)
    chat_store.save_chat(chat)
    a, b = chat_store.load_chat(chat.id), chat_store.load_chat(chat.id)
    turns(a, 1, "A ")
    chat_store.save_chat(a)
    turns(b, 1, "B ")
    chat_store.save_chat(b)
    chat_store.rename_chat(chat.id, "renamed in B")
    a.messages[-1].content += " (longer)"  # A's answer still streams after B saved
    chat_store.save_answer(a)
    chat_store.save_chat(a)
    texts = [m.content for m in chat_store.load_chat(chat.id).messages]
    assert texts == ["question 0", "answer 0", "A question 0", "A answer 0 (longer)", "B question 0", "B answer 0"]
    assert chat_store.load_chat(chat.id).title == "renamed in B"


def test_a_save_that_fails_halfway_stores_nothing_and_the_next_stores_all(data, monkeypatch):
    chat = sample_chat()
    chat_store.save_chat(chat)
    chat.messages += [Message("user", "new question"), Message("assistant", "new answer")]
    real = chat_store._values
    calls = []

    def fail_second(m):  # the disk fills between the two inserts
        calls.append(m)
        if len(calls) == 2:
            raise sqlite3.OperationalError("database or disk is full")
        return real(m)

    monkeypatch.setattr(chat_store, "_values", fail_second)
    with pytest.raises(UserError, match="cannot save chat .* disk is full"):
        chat_store.save_chat(chat)
    assert [m.row for m in chat.messages[-2:]] == [None, None]
    assert len(chat_store.load_chat(chat.id).messages) == 3
    monkeypatch.setattr(chat_store, "_values", real)
    chat_store.save_chat(chat)
    assert [m.content for m in chat_store.load_chat(chat.id).messages][-2:] == ["new question", "new answer"]


def _corrupt(sql: str, *args) -> None:
    """Change the stored rows behind the store's back, as a bad copy or another program would."""
    chat_store.close()
    with sqlite3.connect(chat_store.db_path()) as other:
        other.execute(sql, args)
    other.close()


@pytest.mark.parametrize(
    "sql,lost",
    [
        ("UPDATE messages SET segments = '[[\"cut' WHERE role = 'assistant'", "overlay"),
        ("UPDATE messages SET segments = '[[1, 2, 3]]' WHERE role = 'assistant'", "overlay"),
        ("UPDATE messages SET stats = '{\"acceptance\": ' WHERE role = 'assistant'", "statistics"),
        ("UPDATE chats SET setup = 'not json'", "settings"),
        ('UPDATE chats SET setup = \'["model", "x"]\'', "settings"),
        ("UPDATE messages SET spec_types = '[\"dra' WHERE role = 'assistant'", "configuration"),
        ("UPDATE messages SET draft_n_max = 'eight' WHERE role = 'assistant'", "configuration"),
        ("UPDATE messages SET spec_changes = '[[1]]' WHERE role = 'assistant'", "configuration"),
    ],
)
def test_a_chat_whose_json_columns_are_corrupt_opens_without_them_and_says_so(data, sql, lost):
    chat = sample_chat()
    chat_store.save_chat(chat)
    _corrupt(sql)
    loaded = chat_store.load_chat(chat.id)
    assert [m.content for m in loaded.messages] == [m.content for m in chat.messages]  # the text is all there
    assert isinstance(loaded.setup, dict) and all(isinstance(m.stats, dict) for m in loaded.messages)
    assert all(isinstance(t, str) and isinstance(k, str) for m in loaded.messages for t, k in m.segments)
    assert lost in loaded.damaged and str(chat_store.db_path()) in loaded.damaged and "\n" not in loaded.damaged
    assert [s.id for s in chat_store.list_chats()[0]] == [chat.id]


def test_a_sound_chat_opens_with_nothing_to_say(data):
    chat = sample_chat()
    chat_store.save_chat(chat)
    assert chat_store.load_chat(chat.id).damaged == ""


@pytest.mark.parametrize("bad", ["'NaN'", "9e999", "-9e999", "'yesterday'", "x'00ff'", "1e300"])
def test_a_chat_whose_time_is_no_number_lists_last_and_opens(data, bad):
    from spectui.tui.screens.chats import when

    good, broken = sample_chat(), sample_chat()
    broken.id += "-broken"
    chat_store.save_chat(good)
    chat_store.save_chat(broken)  # saved last: newest, until its time is broken
    _corrupt(f"UPDATE chats SET updated = {bad}, created = {bad} WHERE id = ?", broken.id)
    listed, _ = chat_store.list_chats()
    assert [s.id for s in listed] == [good.id, broken.id] and listed[1].updated == 0.0
    assert all(when(s) for s in listed)  # the picker's line for each
    assert chat_store.latest_chat().id == good.id
    assert chat_store.load_chat(broken.id).updated == 0.0
    assert [s.id for s in chat_store.search("speculative")] == [good.id, broken.id]


def test_an_existing_database_readable_by_others_is_made_private(data):
    chat_store.save_chat(sample_chat())
    other = sqlite3.connect(chat_store.db_path())  # keeps the -wal and -shm files in place
    other.execute("SELECT count(*) FROM chats").fetchone()
    chat_store.close()
    files = [data / n for n in ("chats.db", "chats.db-wal", "chats.db-shm")]
    for f in files:
        f.chmod(0o644)
    chat_store.list_chats()
    other.close()
    assert [stat.S_IMODE(f.stat().st_mode) for f in files if f.exists()] == [0o600] * sum(f.exists() for f in files)
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600


def test_the_data_folder_is_created_private(tmp_path, monkeypatch):
    old = os.umask(0)
    try:
        monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path / "new" / "data"))
        chat_store.save_chat(sample_chat())
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new" / "data").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700


# --- unsaved files: what a quit kept when the chat could not be saved ---------------------


@pytest.fixture
def unsaved_dirs(tmp_path, monkeypatch):
    """The folders where quits keep unsaved chats (beside the data dir, here, the temp
    folder), all inside the test's own."""
    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path / "share" / "data"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return tmp_path


def test_the_turns_a_quit_kept_are_added_to_their_chat_once(unsaved_dirs):
    chat = sample_chat()
    chat_store.save_chat(chat)  # turn 1 stored while its answer streamed
    chat.messages[-1].content += " Its end."  # ... its end, and turns 2 and 3, were not
    chat.messages[-1].stopped = False
    turns(chat, 2, "unsaved ")
    chat.messages[-1].segments = [("unsaved ", "draft"), ("x", "rejected"), ("answer 1", "target")]
    kept = chat_import.write_unsaved(chat, unsaved_dirs / "share")
    chat_types.export_markdown(chat, kept.with_suffix(".md"))
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    notes, problems = chat_store.import_unsaved()
    assert problems == [] and len(notes) == 1 and str(kept.with_suffix(".md")) in notes[0]
    loaded = chat_store.load_chat(chat.id)
    assert loaded.messages == chat.messages  # the overlay too: nothing lost
    assert not kept.exists() and not kept.with_suffix(".md").exists()
    backup = chat_import.backup_dir()
    assert {f.name for f in backup.iterdir()} == {kept.name, kept.with_suffix(".md").name}
    assert chat_store.import_unsaved() == ([], []) and len(chat_store.load_chat(chat.id).messages) == 7


def test_an_unsaved_chat_whose_edit_dropped_rows_and_that_was_deleted_meanwhile(unsaved_dirs):
    chat = sample_chat()
    turns(chat, 1)
    chat_store.save_chat(chat)
    chat.cut(3)  # an edit: the stored turn goes, a new one follows
    turns(chat, 1, "edited ")
    chat_import.write_unsaved(chat, unsaved_dirs)
    chat_store.import_unsaved()
    assert [m.content for m in chat_store.load_chat(chat.id).messages][3:] == ["edited question 0", "edited answer 0"]
    chat_store.delete_chat(chat.id)  # another window deleted it before the kept turns came back
    chat_import.write_unsaved(chat, unsaved_dirs / "tmp")
    chat_store.import_unsaved()
    assert chat_store.load_chat(chat.id).messages == chat.messages


def test_an_unsaved_file_that_cannot_be_imported_stays_and_is_listed(unsaved_dirs, monkeypatch):
    chat = sample_chat()
    kept = chat_import.write_unsaved(chat, unsaved_dirs)
    (unsaved_dirs / "share").mkdir()
    (unsaved_dirs / "share" / f"{chat_import.UNSAVED}x.json").write_text("{broken")
    (unsaved_dirs / "tmp" / f"{chat_import.UNSAVED}dir.json").mkdir()  # not a file: never read
    real = chat_store._values

    def full(m):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(chat_store, "_values", full)
    notes, problems = chat_store.import_unsaved()
    assert notes == [] and [p.name for p, _ in problems] == [f"{chat_import.UNSAVED}x.json", kept.name]
    assert "not a valid unsaved chat" in problems[0][1] and "disk is full" in problems[1][1]
    listed, unreadable = chat_store.list_chats()  # ctrl+l lists both
    assert len(unreadable) == 2 and kept.exists()
    monkeypatch.setattr(chat_store, "_values", real)
    assert [s.id for s in chat_store.list_chats()[0]] == [chat.id] and not kept.exists()


def test_the_importer_moves_files_only(data):
    """A folder named like a journal is no journal: it stays, and keeps its mode."""
    folder = data / "chats"
    shutil.copytree(OLD_CHATS, folder)
    name = next(folder.glob("*.json")).stem
    (folder / f"{name}.journal").unlink(missing_ok=True)
    (folder / f"{name}.journal").mkdir(mode=0o755)
    chat_store.list_chats()
    assert (folder / f"{name}.journal").is_dir()
    assert stat.S_IMODE((folder / f"{name}.journal").stat().st_mode) == 0o755


def test_the_chat_command_restores_an_unsaved_chat_before_resuming_it(unsaved_dirs, monkeypatch):
    from spectui.cli import chat as chat_command
    from spectui.launch import opening
    from tests.cli_helpers import run_cli

    resumed = []

    class Loaded(Exception):
        pass

    def at_the_models(setup, *args, **kwargs):  # where the models would load: the app is next
        resumed.append(setup)
        raise Loaded

    monkeypatch.setattr(chat_command, "has_terminal", lambda: True)
    monkeypatch.setattr(opening, "checked_models", at_the_models)
    chat = sample_chat()
    chat_store.save_chat(chat)
    turns(chat, 1, "unsaved ")
    chat_import.write_unsaved(chat, unsaved_dirs)
    r = run_cli("chat", "--resume", "--preset", "smollm2", reached=Loaded)
    assert r.returncode == 0 and "are back in the chat" in " ".join(r.stderr.split()), r.stderr
    assert any("are back in the chat" in n for n in resumed[0].notes)  # the chat shows it once loaded
    assert chat_store.load_chat(chat.id).messages == chat.messages

"""Options described once (spectui/options.py): a new per-chat setting is one record, plus one
migration where each answer keeps it, and the flag, the form, the checks, the store and the
README's table follow from it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from spectui.config.setup import OPTIONS, Setup
from spectui.errors import UserError
from spectui.options import NUMBER

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_1 = ROOT / "tests" / "data" / "chats_schema1.db"  # a database from before the migrations list

# the one record: a sampling setting each answer keeps, beside min-p
RECORD = """\
    typical_p: float = _sampling(
        1.0, "--typical-p", help="locally typical sampling", label="typical-p", lo=0, hi=1,
        rule="between 0 and 1", form=NUMBER, hint="keep the tokens of typical surprise; 1: off", per_answer=True,
    )  # fmt: skip
"""
# the one migration: the stored answers' column
MIGRATION = """
def typical_p_column(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE messages ADD COLUMN typical_p REAL")


"""

CHECKS = textwrap.dedent(
    """
    import contextlib, io, shutil, sqlite3, sys

    from spectui.cli.flags_table import markdown
    from spectui.cli.main import build_parser
    from spectui.cli.setup_flags import overrides_from
    from spectui.config.resolve import resolve, restored
    from spectui.config.setup import Setup
    from spectui.errors import UserError
    from spectui.store import answers, chat_store
    from spectui.store.chat_types import AnswerConfig, Message, new_chat
    from spectui.tui.screens.settings import FIELDS, checked

    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), contextlib.suppress(SystemExit):
        build_parser().parse_args(["chat", "--help"])
    words = shown.getvalue().split()  # its help may start on the flag's line or the next
    at = words.index("--typical-p")
    assert words[at : at + 7] == ["--typical-p", "TYPICAL_P", "locally", "typical", "sampling", "(default", "1.0)"]

    args = build_parser().parse_args(["run", "--typical-p", "2", "hi"])
    try:
        resolve(None, overrides_from(args))
        raise AssertionError("--typical-p 2 was taken")
    except UserError as e:
        assert str(e) == "--typical-p must be between 0 and 1, got 2.0", e

    assert "typical_p" in [f.name for f in FIELDS], "the settings form"
    assert checked(Setup(), {"typical_p": "0.5"}) == {"typical_p": 0.5}, "the form checks it as Setup does"

    chat = new_chat()
    setup = Setup().with_values({"typical_p": 0.25, "temp": 0.0})
    chat.setup = setup.values()
    answer = AnswerConfig.of(setup.spec, setup.per_answer())  # as the chat starts an answer
    chat.messages = [Message("user", "hi"), Message("assistant", "yo", stats={"n": 1}, config=answer)]
    chat_store.save_chat(chat)
    chat_store.close()
    again = chat_store.load_chat(chat.id)
    assert again.messages[1].config.typical_p == 0.25, "the answer's column"
    assert restored(again.setup, Setup())[0].typical_p == 0.25, "the chat's settings"
    assert [stats for _, _, stats in answers.answer_stats()] == [{"n": 1}], "the store counts it"
    chat_store.close()

    old = sys.argv[1] + "/old"
    shutil.copy(sys.argv[2], old + ".db")
    with sqlite3.connect(old + ".db") as db:  # an older database upgrades through every migration
        chat_store.migrations.migrate(db, old)
        assert "typical_p" in [row[1] for row in db.execute("PRAGMA table_info(messages)")]

    assert "| `--typical-p` | 1.0 | locally typical sampling |" in markdown(), "the README's table"
    print("SEEN")
    """
)


def _with_the_setting(copy: Path) -> None:
    """The package at `copy` with the new record and its migration written into its source."""
    setup = copy / "config" / "setup.py"
    text = setup.read_text(encoding="utf-8")
    at = text.index("    seed: int | None = _sampling(")
    setup.write_text(text[:at] + RECORD + text[at:], encoding="utf-8")
    migrations = copy / "store" / "migrations.py"
    text = migrations.read_text(encoding="utf-8")
    listed = "MIGRATIONS: list[Migration] = [chats_and_messages, answer_configuration"
    at = text.index("# In order; never reorder")
    text = text[:at] + MIGRATION.lstrip("\n") + text[at:]
    migrations.write_text(text.replace(listed, listed + ", typical_p_column"), encoding="utf-8")


def test_a_new_per_chat_setting_is_one_record_and_one_migration(tmp_path):
    """The issue's promise, on a copy of the package with one record and one migration added:
    the flag and its default in --help, the refusal naming the flag, the settings form, the
    chat saved and reloaded (its settings and the answer's column), and the README's table."""
    shutil.copytree(ROOT / "spectui", tmp_path / "spectui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "presets", tmp_path / "presets")
    _with_the_setting(tmp_path / "spectui")
    env = os.environ | {
        "PYTHONPATH": str(tmp_path),
        "SPECTUI_DATA_DIR": str(tmp_path / "data"),
        "SPECTUI_CONFIG_DIR": str(tmp_path / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-c", CHECKS, str(tmp_path), str(SCHEMA_1)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("SEEN")


def test_the_defaults_are_written_once():
    """The sampling defaults are llama.cpp's, in llama/sampling.py; Setup takes them from there."""
    from spectui.llama.sampling import SamplingParams

    assert Setup().sampling() == SamplingParams()


@pytest.mark.parametrize(
    "name, value, says",
    [
        ("temp", float("nan"), "--temp must be a finite number, got nan"),
        ("temp", -1.0, "--temp must be 0 (greedy) or more, got -1.0"),
        ("top_k", 1.5, "--top-k must be a whole number, got 1.5"),
        ("n_gpu_layers", -2, "-ngl/--n-gpu-layers must be -1 (all) or a number of layers, got -2"),
        ("flash_attn", "maybe", "-fa/--flash-attn must be one of on, off, auto, got 'maybe'"),
        ("n_predict", 0, "-n/--n-predict must be at least 1, or -1 for no limit, got 0"),
        ("spec_verify", "exact", "--spec-verify must be one of match, rejection, got 'exact'"),
        ("spec_ngram_mod_n_match", 0, "--spec-ngram-mod-n-match must be at least 1 and at most 1024, got 0"),
    ],
)
def test_a_value_is_checked_against_its_record(name, value, says):
    with pytest.raises(UserError) as e:
        Setup().with_values({name: value})
    assert str(e.value) == says


def test_every_form_field_is_an_option_the_form_can_edit():
    """A number field edits a number; a choice field has its choices; the free text is the system prompt."""
    for o in OPTIONS.values():
        if o.form == NUMBER:
            assert o.type in (int, float), o.name
        elif o.form:
            assert (o.form == "choice") == bool(o.choices) and (o.form == "text") == o.prose, o.name


def test_a_seed_of_minus_1_runs_and_is_kept_as_random():
    """-1 is how a flag writes "random": the sampler gets no seed and the answer keeps none."""
    setup = Setup(seed=-1)
    assert setup.per_answer()["seed"] is None and setup.sampling().seed is None
    assert Setup(seed=7).per_answer()["seed"] == 7 == Setup(seed=7).sampling().seed


def test_help_says_what_the_default_preset_chooses_where_it_differs():
    """`run --help` said --spec-type's default is none; without --preset, draft-simple runs."""
    spec_type, model, n_max = OPTIONS["spec_type"], OPTIONS["model"], OPTIONS["spec_draft_n_max"]
    assert spec_type.help_line("draft-simple").endswith("(default none; the default preset: draft-simple)")
    assert model.help_line("qwen").endswith("model name; the default preset: qwen")
    assert n_max.help_line(3) == n_max.help_line() and n_max.help_line().endswith("(default 3)")

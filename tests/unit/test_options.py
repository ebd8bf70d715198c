"""Options described once (spectui/options.py): a new per-chat setting is one record, plus one
migration where each answer keeps it (and its SamplingParams field where it reaches the
sampler), and the flag, the form, the checks, the store and the README's table follow from it;
a per-answer record that reaches nothing refuses the package at import."""

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
from spectui.llama.sampling import SamplingParams
from spectui.options import NUMBER, SWITCH, check_reach, described, option
from spectui.spec_config import SpecConfig

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_1 = ROOT / "tests" / "data" / "chats_schema1.db"  # a database from before the migrations list

# the records: a sampling setting and a switch each answer keeps, beside min-p
RECORD = """\
    typical_p: float = _sampling(
        1.0, "--typical-p", help="locally typical sampling", label="typical-p", lo=0, hi=1,
        rule="between 0 and 1", form=NUMBER, hint="keep the tokens of typical surprise; 1: off", per_answer=True,
        reaches="sampler",
    )  # fmt: skip
    penalize_nl: bool = _sampling(
        True, "--penalize-nl", help="penalize newlines", label="penalize newlines", form="switch",
        hint="newlines count as repeats", per_answer=True, reaches="sampler",
    )  # fmt: skip
"""
# where the sampler implements them (llama/sampling.py): the fields the samplers read
SAMPLER_FIELDS = """\
    typical_p: float = field(default=1.0, metadata={"wire": "typical_p"})
    penalize_nl: bool = field(default=True, metadata={"wire": "penalize_nl"})
"""
# the one migration: the stored answers' columns
MIGRATION = """
def typical_p_column(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE messages ADD COLUMN typical_p REAL")
    conn.execute("ALTER TABLE messages ADD COLUMN penalize_nl INTEGER")


"""

CHECKS = textwrap.dedent(
    """
    import contextlib, io, shutil, sqlite3, sys

    from spectui.cli.flags_table import markdown
    from spectui.cli.main import build_parser
    from spectui.chat.planning import plan_argv
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

    at = words.index("--penalize-nl,")
    assert words[at : at + 5] == ["--penalize-nl,", "--no-penalize-nl", "penalize", "newlines", "(default"], words[at:]
    args = build_parser().parse_args(["run", "--no-penalize-nl", "hi"])
    assert resolve(None, overrides_from(args)).sampling().penalize_nl is False, "the flag reaches the sampler"
    assert overrides_from(build_parser().parse_args(["run", "hi"])).get("penalize_nl") is None, "unset shows the preset"
    assert [f.kind for f in FIELDS if f.name == "penalize_nl"] == [bool], "the form's switch"
    assert checked(Setup(), {"penalize_nl": "off"}) == {"penalize_nl": False}
    assert "--no-penalize-nl" in plan_argv(Setup(penalize_nl=False)), "the plan the chat starts runs with it"

    chat = new_chat()
    setup = Setup().with_values({"typical_p": 0.25, "temp": 0.0, "penalize_nl": False})
    chat.setup = setup.values()
    answer = AnswerConfig.of(setup.spec, setup.per_answer())  # as the chat starts an answer
    chat.messages = [Message("user", "hi"), Message("assistant", "yo", stats={"n": 1}, config=answer)]
    chat_store.save_chat(chat)
    chat_store.close()
    again = chat_store.load_chat(chat.id)
    assert again.messages[1].config.typical_p == 0.25, "the answer's column"
    assert again.messages[1].config.penalize_nl is False, "the switch's column"
    assert restored(again.setup, Setup())[0].typical_p == 0.25, "the chat's settings"
    assert restored(again.setup, Setup())[0].penalize_nl is False
    assert [stats for _, _, stats in answers.answer_stats()] == [{"n": 1}], "the store counts it"
    chat_store.close()

    old = sys.argv[1] + "/old"
    shutil.copy(sys.argv[2], old + ".db")
    with sqlite3.connect(old + ".db") as db:  # an older database upgrades through every migration
        chat_store.migrations.migrate(db, old)
        assert "typical_p" in [row[1] for row in db.execute("PRAGMA table_info(messages)")]

    assert "| `--typical-p` | 1.0 | locally typical sampling |" in markdown(), "the README's table"
    assert "| `--penalize-nl`, `--no-penalize-nl` | on | penalize newlines |" in markdown()

    import asyncio
    from types import SimpleNamespace

    from textual.app import App
    from textual.widgets import Switch

    from spectui.tui.screens.settings import SettingsScreen

    applied = {}
    switcher = SimpleNamespace(state=SimpleNamespace(setup=Setup()), apply_settings=applied.update)

    async def switched_off():  # the form shows the switch, and applies it turned off
        app = App()
        async with app.run_test(size=(120, 40)) as pilot:
            screen = SettingsScreen(switcher)
            await app.push_screen(screen)
            switch = screen.query_one("#penalize_nl", Switch)
            assert switch.value is True
            switch.value = False
            await pilot.press("ctrl+s")
            await pilot.pause()

    asyncio.run(switched_off())
    assert applied == {"penalize_nl": False}, applied
    print("SEEN")
    """
)


def _with_the_record(copy: Path) -> None:
    """The package at `copy` with the new records written into Setup, beside the seed."""
    setup = copy / "config" / "setup.py"
    text = setup.read_text(encoding="utf-8")
    at = text.index("    seed: int | None = _sampling(")
    setup.write_text(text[:at] + RECORD + text[at:], encoding="utf-8")


def _with_the_setting(copy: Path) -> None:
    """The package at `copy` with the new records, their sampler fields and their migration."""
    _with_the_record(copy)
    sampling = copy / "llama" / "sampling.py"
    text = sampling.read_text(encoding="utf-8")
    at = text.index("    seed: int | None = field(")
    sampling.write_text(text[:at] + SAMPLER_FIELDS + text[at:], encoding="utf-8")
    migrations = copy / "store" / "migrations.py"
    text = migrations.read_text(encoding="utf-8")
    listed = "MIGRATIONS: list[Migration] = [chats_and_messages, answer_configuration"
    at = text.index("# In order; never reorder")
    text = text[:at] + MIGRATION.lstrip("\n") + text[at:]
    migrations.write_text(text.replace(listed, listed + ", typical_p_column"), encoding="utf-8")


def _run_copy(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    """`code` run on the package's copy at `tmp_path`, with its own folders."""
    env = os.environ | {
        "PYTHONPATH": str(tmp_path),
        "SPECTUI_DATA_DIR": str(tmp_path / "data"),
        "SPECTUI_CONFIG_DIR": str(tmp_path / "config"),
    }
    return subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), str(SCHEMA_1)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "spectui", tmp_path / "spectui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "presets", tmp_path / "presets")
    return tmp_path / "spectui"


def test_a_new_per_chat_setting_is_one_record_and_one_migration(tmp_path):
    """The issue's promise, on a copy of the package with a number and a switch added (their
    records, their sampler fields, one migration): the flags and defaults in --help, the
    refusal naming the flag, the sampler given the value, the settings form, the chat saved and
    reloaded (its settings and the answer's columns), and the README's table."""
    _with_the_setting(_copy(tmp_path))
    done = _run_copy(tmp_path, CHECKS)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("SEEN")


def test_a_per_answer_setting_no_sampler_reads_fails_the_import(tmp_path):
    """The records alone, with no SamplingParams field to reach: the package refuses to import,
    naming the setting, rather than store and show a value the sampler ignores."""
    _with_the_record(_copy(tmp_path))
    done = _run_copy(tmp_path, "import spectui.config.setup")
    assert done.returncode == 1
    assert "TypeError: per-answer setting 'typical_p' reaches no sampler: SamplingParams has no field" in done.stderr


def test_a_per_answer_record_must_name_a_field_of_what_it_reaches():
    """The check on a test-made settings class: a field of the sampler passes; one it lacks, one
    that names nothing it reaches, and a sampler field no record sets are refused."""
    from dataclasses import make_dataclass

    def records(**fields_):
        return described(make_dataclass("Made", [(n, "float", f) for n, f in fields_.items()]))

    sampler = {"sampler": SamplingParams, "engine": SpecConfig}
    temp = records(temp=option(0.8, "--temp", help="t", per_answer=True, reaches="sampler"))
    check_reach(temp, sampler)
    with pytest.raises(TypeError, match="'typical_p' reaches no sampler: SamplingParams has no field 'typical_p'"):
        check_reach(records(typical_p=option(1.0, "--t", help="t", per_answer=True, reaches="sampler")), sampler)
    with pytest.raises(TypeError, match="'temp': reaches must be one of sampler, engine, got ''"):
        check_reach(records(temp=option(0.8, "--temp", help="t", per_answer=True)), sampler)
    with pytest.raises(TypeError, match="SamplingParams fields with no per-answer record: top_k, top_p, min_p, seed"):
        check_reach(temp, sampler, whole=("sampler",))


def test_the_derived_lists_follow_the_records():
    """The memory check's settings, the calibration key's and `run --json`'s come from records."""
    from spectui.chat import memory_check
    from spectui.cli.run import recorded
    from spectui.plan import identity

    assert memory_check.SETTINGS == (
        "n_gpu_layers", "n_gpu_layers_draft", "ctx_size", "batch_size", "flash_attn",
        "cache_type_k_draft", "cache_type_v_draft",
    )  # fmt: skip
    assert identity.calibration_key(Setup(system="be brief"), ["hi"])["settings"] == {
        "spec_draft_n_min": 0, "spec_draft_p_min": 0.0, "spec_draft_sampling": "greedy", "spec_verify": "match",
        "system": "be brief",
    }  # fmt: skip
    assert recorded(Setup(model="/models/a.gguf", seed=-1)) == {
        "model": "a.gguf", "model_draft": "-", "n_gpu_layers": -1, "n_gpu_layers_draft": -1, "ctx_size": 4096,
        "backend_sampling": "auto", "n_predict": -1, "temp": 0.8, "seed": -1,
    }  # fmt: skip


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
        elif o.form == SWITCH:
            assert o.type is bool, o.name
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

"""Hostile input: every flag with a wrong type or range, files that are missing, empty,
binary or not UTF-8. Each must end in exit 0 or 2 with at most one line on stderr, never
a traceback, and bad input must be refused before any model loads.

Most cases run `spectui.cli.main.main` in this process; `loaded` replaces the model
loading, so a case that gets that far counts as accepted (exit 0) without the cost.
SIGINT during start-up needs a real process.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from spectui.cli import run as run_command
from spectui.config.setup import OPTIONS
from spectui.options import NUMBERS
from spectui.store import chat_store
from spectui.tui.palette import chat_entries
from spectui.tui.themed import load_themes
from tests.child_output import UPPER_BOUND_S, read_until
from tests.cli_helpers import Loaded, refused, run_cli
from tests.conftest import SMOL
from tests.helpers.processes import interruptible

FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
RUN = ["run", "--preset", "smollm2"]


@pytest.fixture(autouse=True)
def user_dirs_smol_stamped(tmp_path, monkeypatch, smol_path):
    """Own config and data dirs; SmolLM2 is stamped already (smol_path), so no case hashes it."""
    monkeypatch.setenv("SPECTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


@pytest.fixture
def loaded(monkeypatch):
    def refuse(*args, **kwargs):
        raise Loaded

    monkeypatch.setattr(run_command, "open_session", refuse)


def spectui(*argv: str) -> tuple[int, str]:
    """(exit code, stderr) of `spectui ARGV` run here; 0 where it reached the model loading."""
    r = run_cli(*argv, reached=Loaded)
    return r.returncode, r.stderr


def assert_clean(code: int, err: str, want: tuple[int, ...] = (0, 2)) -> None:
    """`code` in `want`, no traceback, at most one line besides the notes ("note: ...")."""
    assert code in want, err
    assert "Traceback" not in err
    assert len([line for line in err.strip().splitlines() if not line.startswith("note: ")]) <= 1, err


# --- flags ------------------------------------------------------------------------------

TYPED = [(o.flags[-1], o.type) for o in OPTIONS.values() if o.type in (int, float)]
CHOICES = [o.flags[-1] for o in OPTIONS.values() if o.choices]


@pytest.mark.parametrize("flag,kind", TYPED)
def test_a_number_flag_given_text_is_one_line_in_the_checks_words(loaded, flag, kind):
    """One format: argparse's "argument --temp: invalid float value: 'abc'" stood beside the
    checks' "--temp must be a finite number"."""
    err = refused(*RUN, flag, "many", "hi", match=f"{flag} must be {NUMBERS[kind]}, got 'many'")
    assert err.startswith("error: ") and "argument" not in err and "invalid" not in err, err


@pytest.mark.parametrize(
    "argv,says",
    [
        ([*RUN, "--temp", "1e400", "hi"], "--temp must be a finite number, got '1e400'"),  # not "got inf"
        ([*RUN, "-n", "1.5", "hi"], "-n/--n-predict must be a whole number, got '1.5'"),
        (["plan", "--depth", "x"], "--depth must be a whole number, got 'x'"),
        (["bench", "--repeat", "x"], "--repeat must be a whole number, got 'x'"),
        (["replay", "t.jsonl", "--speed", "inf"], "--speed must be a finite number, got 'inf'"),
    ],
)
def test_a_number_that_does_not_parse_is_said_as_typed(loaded, argv, says):
    refused(*argv, match=says)


@pytest.mark.parametrize("flag", CHOICES)
def test_a_choice_flag_given_another_word_is_one_line(loaded, flag):
    refused(*RUN, flag, "bogus", "hi", match="invalid choice")


@pytest.mark.parametrize(
    "flags,match",
    [
        (["-c", "0"], "-c 0"),
        (["-c", "-1"], "at least 256"),
        (["-c", "64"], "at least 256"),
        (["-b", "0"], "--batch-size must be at least 1"),
        (["-t", "0"], "--threads must be at least 1"),
        (["-t", "10000"], "more than the"),
        (["-n", "0"], "--n-predict must be at least 1"),
        (["-n", "-2"], "--n-predict"),
        (["--seed", "-5"], "--seed must be 0 to"),
        (["--spec-draft-n-max", "65"], "between 0 and 64"),
        (["--spec-draft-n-min", "-1"], ">= 0"),
        (["--spec-draft-p-min", "1.5"], "between 0 and 1"),
        (["--spec-ngram-mod-n-match", "0"], "at least 1"),
        (["--spec-ngram-mod-n-min", "80"], "must not exceed"),
        (["--spec-type", "bogus"], "unknown --spec-type"),
        (["--spec-type", "auto,ngram-mod"], "give it alone"),
        (["--preset", "nope"], "unknown preset"),
        (["--preset", "missing.toml"], "unknown preset"),
        (["--log-file", "/"], "cannot write the log file"),
        (["--log-file", "/no/such/dir/x.log"], "cannot write the log file"),
        (["--system", "caf\udce9"], "--system is not UTF-8"),
    ],
)
def test_out_of_range_values_are_refused_before_loading(loaded, flags, match):
    refused(*RUN, *flags, "hi", match=match)


@pytest.mark.parametrize(
    "flags",
    [
        ["--spec-draft-n-max", "0"],
        ["--temp", "0"],
        ["--top-p", "1"],
        ["--top-k", "0"],
        ["--min-p", "0"],
        ["--seed", "-1"],
        ["-c", "256"],
        ["-ngl", "0"],
        ["-ctvd", "q4_0", "-fa", "on"],
    ],
)
def test_values_llama_cpp_accepts_are_accepted(loaded, flags):
    assert spectui(*RUN, *flags, "hi") == (0, "")


@FEW
@given(
    flag=st.sampled_from([o.flags[-1] for o in OPTIONS.values()]),
    value=st.one_of(st.integers(-(2**70), 2**70).map(str), st.floats().map(str), st.text(max_size=12)),
)
@example(flag="--model", value="\n0")  # a path with a line break is named on one line
def test_any_value_of_any_flag_is_accepted_or_one_line(loaded, flag, value):
    code, err = spectui(*RUN, f"{flag}={value}", "hi")
    assert_clean(code, err)


def test_a_bad_command_or_flag_is_one_line_not_the_usage():
    for argv in (["models", "frobnicate"], ["run", "--no-such-flag"], ["presets"], ["bench", "--repeat"]):
        code, err = spectui(*argv)
        assert_clean(code, err, want=(2,))
        assert "usage:" not in err and "--help" in err


# --- model files ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content,match", [(None, "not found"), (b"", "empty"), (b"\x00" * 64, "not a GGUF"), ("dir", "not a file")]
)
def test_bad_model_files_fail_before_loading(tmp_path, content, match):
    path = tmp_path / "m.gguf"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    refused(*RUN, "-m", str(path), "hi", match=match)
    refused(*RUN, "-md", str(path), "hi", match=match)


def test_a_missing_model_is_said_before_any_note_about_it():
    # -m without -md drops the preset's draft with a note; the missing file is the fault to read
    err = run_cli(*RUN, "-m", "missing.gguf", "hi", reached=Loaded).stderr
    assert err.startswith("error: model file not found: missing.gguf"), err


def test_a_path_no_file_can_have():
    refused(*RUN, "-m", "~nosuchuser_x/m.gguf", "hi", match="cannot be a file path")


@FEW
@given(data=st.binary(max_size=200))
def test_a_gguf_with_a_garbage_header_is_one_line(tmp_path, data):
    path = tmp_path / "garbage.gguf"
    path.write_bytes(b"GGUF" + data)
    refused(*RUN, "-m", str(path), "hi", match=f"cannot load model {path}")


def test_a_draft_model_with_ngram_types_is_not_loaded(monkeypatch):
    seen = []
    monkeypatch.setattr(
        run_command, "open_session", lambda setup, **kw: seen.append(setup) or (_ for _ in ()).throw(Loaded)
    )
    code, err = spectui(*RUN, "-md", SMOL, "--spec-type", "ngram-mod", "hi")
    assert code == 0 and seen[0].model_draft is None
    assert err.strip() == "note: the draft model (-md) is unused with --spec-type ngram-mod: not loading it"
    code, err = spectui(*RUN, "-md", SMOL, "--spec-type", "auto", "hi")  # auto may draft with it
    assert code == 0 and seen[1].model_draft == SMOL and err == ""


# --- prompts ----------------------------------------------------------------------------


def test_prompt_sources_that_are_not_utf8_name_themselves(loaded, tmp_path, monkeypatch):
    p = tmp_path / "p.txt"
    p.write_bytes(b"hello \xff")
    refused(*RUN, "-f", str(p), match=f"prompt file {p} is not UTF-8 text (byte 0xff at offset 6)")
    refused(*RUN, "hello \udcff", match="the prompt argument is not UTF-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"caf\xe9 au lait")))
    refused(*RUN, match="the prompt on stdin is not UTF-8 text (byte 0xe9 at offset 3)")


@pytest.mark.parametrize(
    "content,match",
    [
        (None, "cannot read prompt file"),
        (b"", "the prompt is empty"),
        (b" \n\t", "the prompt is empty"),
        ("dir", "cannot read prompt file"),
    ],
)
def test_missing_empty_or_directory_prompt_files(loaded, tmp_path, content, match):
    p = tmp_path / "p.txt"
    if content == "dir":
        p.mkdir()
    elif content is not None:
        p.write_bytes(content)
    refused(*RUN, "-f", str(p), match=match)


@FEW
@given(data=st.binary(min_size=1, max_size=64))
def test_any_bytes_as_a_prompt_file(loaded, tmp_path, data):
    p = tmp_path / "p.bin"
    p.write_bytes(data)
    assert_clean(*spectui(*RUN, "-f", str(p)))


def test_bench_input_files(tmp_path):
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\xff\x00\x01")
    refused("bench", "compare", str(tmp_path / "missing.json"), str(binary), match="cannot read")
    refused("bench", "compare", str(binary), str(binary), match="not JSON")
    prompts = tmp_path / "p.toml"
    prompts.write_bytes(b"\xff")
    refused("bench", "--preset", "smollm2", "--prompts", str(prompts), match=f"prompts file {prompts} is not UTF-8")


# --- presets, themes and chats ----------------------------------------------------------


BROKEN = {
    "binary": b"\x00\x01\x02\xfe\xff" * 20,
    "latin1": 'description = "caf\xe9"\n'.encode("latin-1"),
    "syntax": b"model = \n",
    "badkey": b"colour = 1\n",
    "nul": b'model = "a\\u0000b"\n',
    "tilde": b'model = "~nosuchuser_x/m.gguf"\n',
}


@pytest.mark.parametrize("kind", BROKEN)
def test_a_broken_user_preset_is_skipped_by_list_and_refused_when_used(dirs, kind):
    folder = dirs / "config" / "presets"
    folder.mkdir(parents=True)
    (folder / f"{kind}.toml").write_bytes(BROKEN[kind])
    out = run_cli("presets", "list")
    assert out.returncode == 0 and "smollm2" in out.stdout and kind not in out.stdout
    assert out.stderr.startswith(f"warning: preset '{kind}' skipped:") and len(out.stderr.strip().splitlines()) == 1
    if kind in ("binary", "latin1"):  # show prints any other file, with what is wrong in a comment
        refused("presets", "show", kind, match=f"preset {folder / kind}.toml is not UTF-8")
    refused(*RUN, "--preset", kind, "hi", match=kind)


@FEW
@given(data=st.binary(max_size=120))
def test_any_bytes_as_a_preset_or_theme(dirs, data):
    for sub in ("presets", "themes"):
        (dirs / "config" / sub).mkdir(parents=True, exist_ok=True)
        (dirs / "config" / sub / "fuzz.toml").write_bytes(data)
    out = run_cli("presets", "list")
    assert out.returncode == 0 and "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) <= 1
    load_themes()  # never raises: a broken theme is a message
    assert_clean(*spectui(*RUN, "--preset", "fuzz", "--log-file", str(dirs), "hi"), want=(2,))


CHAT = {"id": "c1", "title": "t", "created": 1.0, "updated": 2.0, "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(
    "change",
    [
        {"updated": "NaN"},
        {"created": "inf"},
        {"updated": 1e300},
        {"messages": "abc"},
        {"messages": [{"role": "user", "content": 5}]},
        {"format": "x"},
        {"id": ""},
        {"id": "../x"},
        {"id": "c2"},
    ],
)
def test_a_corrupt_chat_is_listed_as_unreadable_by_its_name(dirs, change):
    folder = dirs / "data" / "chats"
    folder.mkdir(parents=True)
    (folder / "c1.json").write_text(json.dumps(CHAT | change), encoding="utf-8")
    chats, problems = chat_store.list_chats()
    assert chats == [] and [p.name for p, _ in problems] == ["c1.json"]
    shown = []
    [(title, pick, _)] = chat_entries(lambda chat_id: None, shown.append)
    assert title == "unreadable: c1.json"
    pick()
    assert "c1.json" in shown[0] and "not a valid chat file" in shown[0]


@FEW
@given(
    doc=st.recursive(
        st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
        max_leaves=12,
    ),
    keys=st.dictionaries(st.sampled_from(list(CHAT)), st.none() | st.floats() | st.text(max_size=4), max_size=3),
)
def test_any_json_as_a_chat_file(dirs, doc, keys):
    folder = dirs / "data" / "chats"
    folder.mkdir(parents=True, exist_ok=True)
    for stored in chat_store.list_chats()[0]:  # each example imports into an empty database
        chat_store.delete_chat(stored.id)
    (folder / "a.json").write_text(json.dumps(doc), encoding="utf-8")
    (folder / "b.json").write_text(json.dumps(CHAT | keys), encoding="utf-8")
    chats, problems = chat_store.list_chats()
    assert len(chats) + len(problems) == 2
    for entry in chat_entries(lambda chat_id: None, lambda message: None):  # the picker's lines
        assert entry[0] and entry[2]
    for chat in chats:
        chat_store.load_chat(chat.id).to_markdown()


# --- SIGINT -----------------------------------------------------------------------------


# Each start-up phase, reached as the child says it: an import's line (-X importtime; llama_cpp is
# imported inside the command's parser), llama.cpp's loader log (--verbose), the first token.
PHASES = {
    "imports": (["-X", "importtime"], [], "stderr", lambda said: "llama_cpp" in said),
    "model loading": ([], ["--verbose"], "stderr", lambda said: "llama_model_loader:" in said),
    "generation": ([], [], "stdout", bool),
}


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.model
def test_ctrl_c_during_start_up_exits_130_without_a_traceback(dirs, phase):
    python_flags, flags, pipe, reached = PHASES[phase]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen(  # --ignore-eos: the answer cannot end before the signal lands
        [sys.executable, *python_flags, "-m", "spectui", *RUN, *flags, "-n", "4000", "--ignore-eos", "Count to 200."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=interruptible,
    )
    said = read_until(p, p.stdout if pipe == "stdout" else p.stderr, reached, f"the {phase} phase")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=UPPER_BOUND_S)
    err = said + err if pipe == "stderr" else err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "Exception ignored" not in err, err
    # once generating, Ctrl+C stops the answer instead, and the summary says so
    if phase == "generation":
        assert p.returncode == 0 and "stopped (Ctrl+C)" in err, (p.returncode, err)
    assert p.returncode == 130 or (p.returncode == 0 and "stopped (Ctrl+C)" in err), (p.returncode, err)

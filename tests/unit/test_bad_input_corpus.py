"""The bad-input corpus: every command and flag given values it must refuse, every
reader given files it must refuse (nested 100,000 deep, binary, endless, too large, wrong
types, empty, a folder, a FIFO), and a fake llama-server on 127.0.0.1 answering wrong types
or failing part way through its stream (exit 1, or 2 where it is no llama-server).

Each case ends in exit 2 with one line and no traceback, or in the documented behaviour (a
broken preset is skipped by `presets list`, broken settings fall back to the defaults with a
message). Cases run `spectui.cli.main.main` in this process (tests/cli_helpers.py); a command
that gets past its checks raises Loaded where it would load the models. What needs a real
process (stdin closed or not a terminal, stdout on /dev/full) uses one, with a timeout. tests/unit/test_bad_input.py
holds the fuzzed and the model-file cases; nothing here repeats them.
"""

from __future__ import annotations

import io
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest

from spectui.bounded import CONFIG_BYTES
from spectui.cli import bench as bench_command
from spectui.cli import chat as chat_command
from spectui.cli import run as run_command
from spectui.config.model_choice import not_a_model
from spectui.config.recent import recent_models, recent_path
from spectui.config.resolve import resolve, restored
from spectui.config.settings import Settings, load_settings
from spectui.config.setup import OPTIONS
from spectui.launch import opening
from spectui.tui.themed import load_themes
from tests.cli_helpers import Loaded, refused, run_cli

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "smollm2_turn.jsonl"
REAL = {"open_session": run_command.open_session, "checked_models": opening.checked_models}
HAS_TERMINAL = chat_command.has_terminal


@pytest.fixture(autouse=True)
def user_dirs_loading_stubbed(tmp_path, monkeypatch):
    """Own config and data dirs; the model loading of run, bench and chat replaced by Loaded."""
    monkeypatch.setenv("SPECTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where unsaved chats are looked for, too

    def loaded(*args, **kwargs):
        raise Loaded

    monkeypatch.setattr(run_command, "open_session", loaded)
    monkeypatch.setattr(bench_command, "open_session", loaded)
    monkeypatch.setattr(opening, "checked_models", loaded)
    monkeypatch.setattr(chat_command, "has_terminal", lambda: True)
    return tmp_path


# --- flags: every number out of range, every value empty, for run, chat, bench and plan --

COMMANDS = {
    "run": ["run", "--preset", "smollm2"],
    "chat": ["chat", "--preset", "smollm2"],
    "bench": ["bench"],
    "plan": ["plan", "--preset", "smollm2"],
}
INTS = [name for name, o in OPTIONS.items() if o.type is int]
FLOATS = [name for name, o in OPTIONS.items() if o.type is float]
# (option, value, what its refusal says after the flag): argparse's kind error, the record's check
FLAG_CASES = (
    [(o, v, " must be") for o in INTS for v in ("-2", "99999999999999999999", "-99999999999999999999")]
    + [(o, "1.5", " must be a whole number") for o in INTS]
    + [(o, v, " must be a finite number") for o in FLOATS for v in ("nan", "inf", "-inf", "1e999")]
    + [(o, "-1", " must be") for o in FLOATS]
    + [(o, "", ": an empty value") for o in OPTIONS if o != "system"]
)
# a bound checked by hand: the threads against the CPUs this process may use
BY_HAND = {("threads", "99999999999999999999"): " 99999999999999999999 is more than the"}


def tail(command: str) -> list[str]:
    return ["hi"] if command == "run" else []


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name,value,says", FLAG_CASES)
def test_a_flag_value_out_of_range_or_empty_is_one_line(command, name, value, says):
    o = OPTIONS[name]
    says = BY_HAND.get((name, value), says)
    refused(*COMMANDS[command], f"{o.flags[-1]}={value}", *tail(command), match=o.flag + says)


def test_a_flag_a_command_does_not_take_passes_for_no_other_refusal():
    """argparse refuses an unknown flag in one line with exit 2 too: a case whose flag a command
    lost fails, unless it expects exactly that."""
    with pytest.raises(AssertionError, match="unrecognized arguments"):
        refused("bench", "--temp-typo=nan", match="--temp-typo")
    refused("bench", "--temp-typo=nan", match="unrecognized arguments: --temp-typo")


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("flag", ["--preset", "--log-file"])
def test_an_empty_preset_or_log_file_is_one_line(command, flag):
    refused(*COMMANDS[command], f"{flag}=", *tail(command), match="empty value")


# --- the commands' own arguments --------------------------------------------------------

N_MIN_OVER_N_MAX = ["--preset", "smollm2", "--spec-draft-n-min", "5", "--spec-draft-n-max", "3"]
N_MIN_SAYS = "--spec-draft-n-min (5) must not exceed --spec-draft-n-max (3)"
COMMAND_CASES = [
    (["run", "--preset", "smollm2", "--trace=", "hi"], "empty value"),
    (["run", "--preset", "smollm2", "-f", ""], "empty value"),
    (["run", "--preset", "smollm2", "--trace", "/no/such/dir/t.jsonl", "hi"], "does not exist"),
    (["run", "--preset", "smollm2", "--trace", "{tmp}", "hi"], "is a folder"),
    (["run", "--server", "http://[", "hi"], "not a valid URL"),
    (["run", "--server", "http://127.0.0.1:abc", "hi"], "not a valid URL"),
    (["run", "--server", "http://127.0.0.1:99999", "hi"], "not a valid URL"),
    (["run", "--server", "http://a b:80", "hi"], "space"),
    (["run", "--server", "ftp://127.0.0.1", "hi"], "http(s) URL"),
    (["run", "--server", "http://", "hi"], "http(s) URL"),
    (["run", "--server", "http://127.0.0.1:1,http://[", "hi"], "not a valid URL"),
    (["run", "--preset", "smollm2", "-ctvd", "q4_0", "-fa", "off", "hi"], "needs flash attention"),
    (["run", "--preset", "smollm2", "--spec-type", ",", "hi"], "--spec-type needs a type"),
    (["bench", "--repeat", "0"], "--repeat must be"),
    (["bench", "--repeat", "1000000"], "--repeat must be"),
    (["bench", "--limit", "0"], "--limit"),
    (["bench", "--prompts="], "empty value"),
    (["bench", "--json", "/no/such/dir/r.json"], "does not exist"),
    (["bench", "--csv", "{tmp}"], "is a folder"),
    (["bench", "--markdown", "/no/such/dir/r.md"], "does not exist"),
    (["bench", "--json", "{tmp}/r.json", "--csv", "/no/such/dir/r.csv"], "--csv"),
    (["bench", "compare", "", "x.json"], "empty value"),
    (["bench", "compare", "{tmp}", "{tmp}"], "cannot read"),
    (["replay", ""], "empty value"),
    (["replay", "{tmp}/missing.jsonl"], "cannot read"),
    (["replay", "{trace}", "--speed", "nan"], "--speed"),
    (["replay", "{trace}", "--speed", "0"], "--speed"),
    (["replay", "{trace}", "--export", "/no/such/dir/x.svg"], "does not exist"),
    (["replay", "{trace}", "--export", "{tmp}"], "is a folder"),
    (["replay", "{trace}", "--export="], "empty value"),
    (["replay", "{trace}", "-m="], "empty value"),
    (["presets", "show", ""], "empty value"),
    (["presets", "show", "nope"], "unknown preset"),
    (["models", "path", ""], "empty value"),
    (["models", "path", "nope"], "unknown model 'nope'"),
    (["models", "install", ""], "empty value"),
    (["models", "verify", ""], "empty value"),
    (["replay", "{trace}", "--speed", "1e999"], "--speed"),
    (["replay", "{trace}", "--speed", "-inf"], "--speed"),
    (["run", "--preset", "smollm2", "-f", "{tmp}/p.txt", "hi"], "not both"),
    (["chat", "--server="], "empty value"),
    (["chat", "--server", "http://["], "not a valid URL"),
    (["chat", "--preset", "smollm2", "--spec-type="], "empty value"),
    (["run", "--server", f"http://{'a' * 64}.example:8080", "hi"], "longer than 63 characters"),
    (["chat", "--server", f"http://127.0.0.1:1,{'b' * 64}"], "longer than 63 characters"),
    (["run", "--server", "http://a..b:8080", "hi"], "empty or longer"),
    (["bench", "--sweep-n-max", "3,,5"], "empty element"),
    (["bench", "--sweep-n-max", "3,5,"], "empty element"),
    (["bench", "--sweep-types", "ngram-simple;;ngram-mod"], "empty element"),
    (["bench", "--json", "/proc/r.json"], "cannot write"),  # permission bits pass for root; creating does not
    (["bench", "--csv", "/proc/r.csv"], "cannot write"),
    (["run", "--preset", "smollm2", "--trace", "/proc/t.jsonl", "hi"], "cannot write"),
    # llama.cpp keeps no draft shorter than n-min: such a pair drafted nothing, silently
    (["run", *N_MIN_OVER_N_MAX, "hi"], N_MIN_SAYS),
    *(([command, *N_MIN_OVER_N_MAX], N_MIN_SAYS) for command in ("chat", "bench", "plan")),
]


@pytest.mark.parametrize("argv,match", COMMAND_CASES, ids=[" ".join(a) for a, _ in COMMAND_CASES])
def test_a_command_given_a_bad_argument_is_one_line(dirs, argv, match):
    refused(*(a.format(tmp=dirs, trace=TRACE) for a in argv), match=match)


SECRET = "s3cr3t-pw"
USERINFO_URLS = [
    f"http://user:{SECRET}@127.0.0.1:8080/",
    f"user:{SECRET}@127.0.0.1:abc",  # a bad port too: its message quoted the URL
    f"http://user:{SECRET}@[::1",
    f"http://127.0.0.1:1,https://user:{SECRET}@127.0.0.1:2",
]


@pytest.mark.parametrize("url", USERINFO_URLS)
@pytest.mark.parametrize("command", ["run", "chat", "bench"])
def test_a_server_url_with_a_password_is_refused_without_showing_it(command, url):
    err = refused(command, "--server", url, *tail(command), match="USER:PASSWORD@")
    assert SECRET not in err and "LLAMA_API_KEY" in err


@pytest.mark.parametrize("existed", [False, True])
def test_an_output_file_is_checked_by_creating_it_and_left_as_it_was(dirs, existed):
    out = dirs / "r.json"
    if existed:
        out.write_text("earlier result", encoding="utf-8")
    assert run_cli("bench", "--json", str(out), reached=Loaded).returncode == 0  # got past its checks
    assert (out.read_text(encoding="utf-8") == "earlier result") if existed else not out.exists()


@contextmanager
def within(seconds: int):
    """Fail the test where it blocks (a FIFO's open waits for a writer) instead of hanging."""

    def late(*_):
        raise TimeoutError(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, late)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


FIFO_READERS = {
    "run -f": ["run", "--preset", "smollm2", "-f", "{fifo}"],
    "replay": ["replay", "{fifo}"],
    "replay --export": ["replay", "{fifo}", "--export", "{tmp}/x.svg"],
    "bench --prompts": ["bench", "--prompts", "{fifo}"],
    "bench compare": ["bench", "compare", "{fifo}", "{fifo}"],
}


@pytest.mark.parametrize("reader", FIFO_READERS)
def test_a_fifo_is_refused_at_once_not_waited_on(dirs, reader):
    fifo = dirs / "input.jsonl"
    os.mkfifo(fifo)
    with within(10):
        err = refused(*(a.format(fifo=fifo, tmp=dirs) for a in FIFO_READERS[reader]), match="not a regular file")
    assert str(fifo) in err


@pytest.mark.parametrize(
    "content,match",
    [(None, "not found"), (b"", "empty"), (b"\x00" * 64, "not a GGUF"), ("cut", "cut short"), ("dir", "not a file")],
)
@pytest.mark.parametrize("flag", ["-m", "-md"])
def test_the_chat_refuses_a_bad_model_file_before_its_app_opens(dirs, monkeypatch, smol_path, flag, content, match):
    """As run does (README: bad files exit 2): the real checks, not Loaded."""
    monkeypatch.setattr(opening, "checked_models", REAL["checked_models"])
    monkeypatch.setattr("spectui.tui.app.SpecApp.run_reporting", lambda self: (_ for _ in ()).throw(Loaded))
    path = dirs / "m.gguf"
    if content == "dir":
        path.mkdir()
    elif content == "cut":
        path.write_bytes(Path(smol_path).read_bytes()[:5000])
    elif content is not None:
        path.write_bytes(content)
    target = ["-m", str(smol_path)] if flag == "-md" else []  # a file: nothing to assemble or hash
    refused("chat", *target, flag, str(path), match=match)


@pytest.mark.parametrize(
    "content,match",
    [
        (b"root:x:0:0:root:/root:/bin/bash\n", "{path} is not a GGUF file (it does not start with GGUF)"),
        (None, "model file not found: {path}"),
        (b"", "model file is empty: {path}"),
        ("dir", "model path is not a file: {path}"),
        ("fifo", "model path is not a file: {path}"),
    ],
)
def test_another_gguf_file_typed_in_the_chat_s_picker_is_checked_as_it_is_entered(dirs, content, match):
    """The picker's "Another GGUF file…" (tests/tui/test_model_picker.py): one plain line, before a draft is picked."""
    path = dirs / "passwd"
    if content == "dir":
        path.mkdir()
    elif content == "fifo":
        os.mkfifo(path)
    elif content is not None:
        path.write_bytes(content)
    assert not_a_model(str(path)) == match.format(path=path)


GGUF_HEADER = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"k"
GGUFS = {
    "arrays nested 100,000 deep": GGUF_HEADER + struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 100_000,
    "a key 2**62 bytes long": b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**62),
    "2**62 strings": GGUF_HEADER + struct.pack("<I", 9) + struct.pack("<IQ", 8, 2**62) + b"\0" * 64,
    "2**62 tensors": b"GGUF" + struct.pack("<IQQ", 3, 2**62, 0) + b"\0" * 64,
}


@pytest.mark.parametrize("case", GGUFS)
@pytest.mark.parametrize("command", ["run", "chat"])
def test_a_crafted_gguf_header_is_one_line(dirs, monkeypatch, command, case):
    """The header is read before llama.cpp sees the file: huge counts, deep nesting."""
    monkeypatch.setattr(opening, "checked_models", REAL["checked_models"])
    monkeypatch.setattr(run_command, "open_session", REAL["open_session"])  # it checks the files first
    path = dirs / "crafted.gguf"
    path.write_bytes(GGUFS[case])
    refused(command, "-m", str(path), *(["hi"] if command == "run" else []), match="GGUF header")


def test_the_chat_refuses_stdin_that_is_not_a_terminal_in_this_process(monkeypatch):
    monkeypatch.setattr(chat_command, "has_terminal", HAS_TERMINAL)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    refused("chat", match="needs a terminal")


def spectui_process(tmp_path, *argv: str, **popen) -> subprocess.CompletedProcess:
    """`spectui ARGV` in a child process: where what is tested is the process's own stdio."""
    env = {"PATH": "/usr/bin:/bin", "SPECTUI_DATA_DIR": str(tmp_path), "SPECTUI_CONFIG_DIR": str(tmp_path)}
    popen = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE} | popen
    return subprocess.run([sys.executable, "-m", "spectui", *argv], text=True, timeout=60, env=env, cwd=ROOT, **popen)


def one_line(p: subprocess.CompletedProcess, code: int, match: str) -> None:
    assert p.returncode == code and len(p.stderr.strip().splitlines()) == 1, (p.returncode, p.stderr)
    assert match in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("argv,match", [(["run"], "no prompt"), (["chat"], "needs a terminal")])
def test_a_closed_stdin_is_one_line(tmp_path, argv, match):
    """`spectui run <&-`: Python gives a closed stdin as None, which has no isatty."""
    p = spectui_process(tmp_path, *argv, "--preset", "smollm2", stdin=None, preexec_fn=lambda: os.close(0))
    one_line(p, 2, match)


@pytest.mark.parametrize(
    "argv,match", [(["chat"], "needs a terminal"), (["replay", str(TRACE)], "without one, use --export OUT.html")]
)
def test_the_chat_and_the_replay_with_stdin_not_a_terminal_exit_2_at_once(tmp_path, argv, match):
    """The fault trial's chat spun a core until killed, its replay wrote escape codes to the
    file and never ended; now each refuses in one line (the replay's names --export)."""
    p = subprocess.run(
        [sys.executable, "-m", "spectui", *argv],
        stdin=subprocess.DEVNULL,
        stdout=(tmp_path / "out").open("w"),
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "SPECTUI_DATA_DIR": str(tmp_path), "SPECTUI_CONFIG_DIR": str(tmp_path)},
        cwd=ROOT,
    )
    one_line(p, 2, match)
    assert (tmp_path / "out").read_text() == "" and ("--export" in p.stderr) == (argv[0] == "replay")


# --- readers: every file spectui parses, given what it must refuse ----------------------

CONTENTS = {
    "nested-array": b"[" * 100_000,
    "nested-object": b'{"a":' * 100_000,
    "nested-closed": b"[" * 100_000 + b"]" * 100_000,
    "toml-nested": b"a = " + b"[" * 100_000,
    "toml-inline": b"a = " + b"{b = " * 100_000,
    "toml-dotted": b"a." * 100_000 + b"b = 1",
    "toml-header": b"[" + b"a." * 100_000 + b"b]",
    "long-int": b"1" * 5000,
    "binary": bytes(range(256)) * 8,
    "latin1": 'x = "caf\xe9"\n'.encode("latin-1"),
    "nul": b"\x00" * 100,
    "empty": b"",
    "wrong-type": b"[1, 2, 3]",
    "string": b'"just a string"',
    "huge": None,  # a file over the reader's size cap
    "dir": None,  # a folder where the file goes
    "dev-zero": None,  # /dev/zero: endless
}


def place(path: Path, kind: str, cap: int = CONFIG_BYTES) -> Path:
    """Put content `kind` at `path` (a link to /dev/zero for dev-zero); returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "dir":
        path.mkdir()
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(cap + 1)
    else:
        path.write_bytes(CONTENTS[kind])
    return path


# (reader, the argv that reads FILE, its size cap); each refuses every kind with exit 2
FILE_READERS = {
    "replay": (["replay", "{file}"], 64 << 20),
    "bench-compare": (["bench", "compare", "{file}", "{file}"], 64 << 20),
    "bench-prompts-toml": (["bench", "--prompts", "{file}"], 16 << 20),
    "bench-prompts-jsonl": (["bench", "--prompts", "{file}"], 16 << 20),
    "run-preset-file": (["run", "--preset", "{file}", "hi"], CONFIG_BYTES),
    "chat-preset-file": (["chat", "--preset", "{file}"], CONFIG_BYTES),
}
SUFFIX = {"bench-prompts-toml": ".toml", "bench-prompts-jsonl": ".jsonl", "run-preset-file": ".toml"}
BIG = {"replay", "bench-compare"}  # 64 MiB caps: /dev/zero stands for the huge file


@pytest.mark.parametrize("kind", [k for k in CONTENTS])
@pytest.mark.parametrize("reader", FILE_READERS)
def test_a_reader_given_a_bad_file_is_one_line_naming_it(dirs, reader, kind):
    if kind == "huge" and reader in BIG:
        kind = "dev-zero"
    argv, cap = FILE_READERS[reader]
    file = place(dirs / f"input{SUFFIX.get(reader, '.toml' if 'preset' in reader else '.json')}", kind, cap)
    says = f"preset '{file.stem}' names no target model" if kind == "empty" and "preset" in reader else str(file)
    refused(*(a.format(file=file) for a in argv), match=says)


PROMPT_REFUSED = {"binary", "latin1", "empty", "huge", "dir", "dev-zero"}  # the rest is text, a fine prompt


@pytest.mark.parametrize("kind", sorted(PROMPT_REFUSED))
def test_a_bad_prompt_file_is_one_line(dirs, kind):
    place(dirs / "p.txt", kind, 16 << 20)
    says = "the prompt is empty" if kind == "empty" else f"prompt file {dirs / 'p.txt'}"
    refused("run", "--preset", "smollm2", "-f", str(dirs / "p.txt"), match=says)


@pytest.mark.parametrize("kind", ["dev-zero", "binary", "latin1", "empty"])
def test_a_bad_prompt_on_stdin_is_one_line(monkeypatch, kind):
    stream = open("/dev/zero", "rb") if kind == "dev-zero" else io.BytesIO(CONTENTS[kind])  # noqa: SIM115
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=stream, isatty=lambda: False))
    try:
        refused("run", "--preset", "smollm2", match="prompt")
    finally:
        stream.close()


@pytest.mark.parametrize("kind", [k for k in CONTENTS if k != "empty"])
def test_a_bad_user_preset_is_skipped_by_list_and_refused_by_run(dirs, kind):
    place(dirs / "config" / "presets" / "bad.toml", kind)
    out = run_cli("presets", "list")
    assert out.returncode == 0 and "smollm2" in out.stdout, out.stderr
    assert out.stderr.startswith("warning: preset 'bad' skipped:") and len(out.stderr.splitlines()) == 1
    refused("run", "--preset", "bad", "hi", match="bad")


@pytest.mark.parametrize("kind", [k for k in CONTENTS if k != "empty"])
def test_bad_settings_fall_back_to_the_defaults_with_one_line(dirs, kind):
    place(dirs / "config" / "settings.toml", kind)
    settings, message = load_settings()
    assert settings == Settings()
    assert message and "settings.toml" in message and "\n" not in message


@pytest.mark.parametrize("kind", [k for k in CONTENTS if k != "empty"])
def test_a_bad_theme_is_skipped_with_one_line(dirs, kind):
    place(dirs / "config" / "themes" / "bad.toml", kind)
    themes, problems = load_themes()
    names = [t.name for t in themes]
    assert "bad" not in names and "spectui-dark" in names
    assert len(problems) == 1 and "bad.toml" in problems[0] and "\n" not in problems[0]


@pytest.mark.parametrize("kind", list(CONTENTS))
def test_a_bad_recent_models_file_is_an_empty_list(kind):
    place(recent_path(), kind)
    assert recent_models() == []


# --- the same checks for a preset's values and a saved chat's ---------------------------

PRESET_VALUES = {
    "temp = nan": "--temp",
    "temp = inf": "--temp",
    "top_p = -1.0": "--top-p",
    "min_p = nan": "--min-p",
    "top_k = -5": "--top-k",
    "threads = 99999999999999999999": "--threads",
    "threads = 10000": "--threads",
    "ctx_size = 99999999999999999999": "--ctx-size",
    "n_gpu_layers = -7": "-ngl",
    "spec_type = ''": "--spec-type",
    "spec_type = 'bogus'": "--spec-type",
    "spec_draft_n_max = 1000": "--spec-draft-n-max",
    "spec_ngram_mod_n_match = 99999999999": "--spec-ngram-mod-n-match",
    "cache_type_v_draft = 'q4_0'\nflash_attn = 'off'": "flash attention",
    "spec_draft_n_min = 5\nspec_draft_n_max = 3": "--spec-draft-n-min (5) must not exceed --spec-draft-n-max (3)",
}


@pytest.mark.parametrize("values", PRESET_VALUES)
def test_a_preset_holding_a_bad_value_is_refused_as_the_flag_would_be(dirs, values):
    preset = dirs / "config" / "presets" / "p.toml"
    preset.parent.mkdir(parents=True)
    preset.write_text(f'model = "smollm2-135m-instruct-q4_1"\n{values}\n', encoding="utf-8")
    refused("run", "--preset", "p", "hi", match=PRESET_VALUES[values])


SAVED_SETUPS = {
    "model a number": {"model": 123},
    "model a list": {"model": ["a.gguf"]},
    "model_draft a dict": {"model_draft": {"a": 1}},
    "temp NaN": {"temp": float("nan")},
    "top_k a string": {"top_k": "40"},
    "threads huge": {"threads": 10**20},
    "spec type bogus": {"spec_type": "bogus"},
    "not a table": ["model", "x"],
}


@pytest.mark.parametrize("saved", SAVED_SETUPS)
def test_a_saved_chat_with_a_bad_setup_keeps_the_current_one_and_says_why(saved):
    current = resolve("smollm2", {})
    setup, why = restored(SAVED_SETUPS[saved], current)
    assert setup is current and why and "not usable" in why and "\n" not in why


BRACKETS = {
    "jsonl string": ("p.jsonl", '{"id": "a", "lang": "en", "category": "code", "text": "' + "[{" * 500 + '"}\n'),
    "toml string": ("p.toml", 'model = "smollm2-135m-instruct-q4_1"\nsystem = "' + "[" * 500 + '"\n'),
    "toml comment": ("p.toml", 'model = "smollm2-135m-instruct-q4_1"\n# ' + "[" * 500 + "\n"),
    "toml multi-line": ("p.toml", "model = 'smollm2-135m-instruct-q4_1'\nsystem = '''" + "{" * 500 + "'''\n"),
    "toml dotted in a string": ("p.toml", 'model = "smollm2-135m-instruct-q4_1"\nsystem = "' + "a." * 500 + '"\n'),
}


@pytest.mark.parametrize("case", BRACKETS)
def test_brackets_inside_strings_and_comments_are_no_nesting(dirs, case):
    """The depth scan skips strings and comments: a prompt may hold any number of brackets."""
    name, content = BRACKETS[case]
    file = dirs / name
    file.write_text(content, encoding="utf-8")
    argv = ["bench", "--prompts", str(file)] if name.endswith(".jsonl") else ["run", "--preset", str(file), "hi"]
    r = run_cli(*argv, reached=Loaded)
    assert r.returncode == 0, r.stderr


# --- traces: the records' meaning ------------------------------------------------------


def trace_with(edit) -> list[dict]:
    records = [json.loads(line) for line in TRACE.read_text(encoding="utf-8").splitlines()]
    edit(records)
    return records


def _round(records) -> dict:
    return next(r for r in records if r["kind"] == "Round")


TRACE_EDITS = {
    "bogus spec type in a TurnStart": lambda rs: next(r for r in rs if r["kind"] == "TurnStart")["config"].update(
        types=["bogus"]
    ),
    "bogus spec type in the settings": lambda rs: rs[0]["settings"].update(spec_type="bogus"),
    "spec type a number in the settings": lambda rs: rs[0]["settings"].update(spec_type=5),
    "n-max a string": lambda rs: next(r for r in rs if r["kind"] == "TurnStart")["config"].update(draft_n_max="3"),
    "n-max 10**9": lambda rs: next(r for r in rs if r["kind"] == "TurnStart")["config"].update(draft_n_max=10**9),
    "round tokens a dict": lambda rs: _round(rs).update(tokens={"a": 1}),
    "round n_accepted past the drafts": lambda rs: _round(rs).update(n_accepted=99),
    "round t a string": lambda rs: _round(rs).update(t="x"),
    "environment a list": lambda rs: rs[0].update(environment=[]),
    "version a string": lambda rs: rs[0].update(version="1"),
}


@pytest.mark.parametrize("edit", TRACE_EDITS)
def test_a_trace_whose_records_are_wrong_is_one_line(tmp_path, edit):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in trace_with(TRACE_EDITS[edit])) + "\n", encoding="utf-8")
    refused("replay", str(path), match=str(path))


@pytest.mark.model
@pytest.mark.parametrize("bad_id", [-7, -1, 49152, 10**9])
def test_a_trace_id_outside_the_vocabulary_is_refused_before_replay(tmp_path, smol_path, bad_id):
    """Text rebuilt from ids (-m): an id out of range aborted llama.cpp."""

    def edit(records):
        r = _round(records)
        r["tokens"][0] = {"id": bad_id, "piece": None, "source": r["tokens"][0]["source"]}

    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in trace_with(edit)) + "\n", encoding="utf-8")
    refused("replay", str(path), "-m", str(smol_path), "--export", str(tmp_path / "x.svg"), match=f"uses id {bad_id}")


# --- a fake llama-server answering wrong types ------------------------------------------

GOOD = {
    "/props": {"default_generation_settings": {"n_ctx": 4096}, "build_info": "b1", "model_path": "/m.gguf"},
    "probe": {"content": " ", "generation_settings": {"speculative.types": "none"}},
    "/apply-template": {"prompt": "hi"},
    "stream": [{"content": "A", "tokens": [1], "timings": {"prompt_ms": 1.0, "predicted_ms": 2.0}}],
}


class FakeServer(BaseHTTPRequestHandler):
    """Answers as GOOD does, but with `answers` (the class's) over it: a path's JSON, "probe"
    for the one-token request, "stream" for the streamed chunks (a list; a str is sent raw)."""

    answers: dict = {}

    def log_message(self, *args):
        pass

    def _send(self, body: bytes, kind: str = "application/json") -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _answer(self, key: str) -> None:
        answer = self.answers.get(key, GOOD.get(key))
        self._send(answer if isinstance(answer, bytes) else json.dumps(answer).encode())

    def do_GET(self):
        self._answer(self.path)

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/completion":
            return self._answer(self.path)
        if not request.get("stream"):
            return self._answer("probe")
        chunks = self.answers.get("stream", GOOD["stream"])
        lines = [c if isinstance(c, str) else f"data: {json.dumps(c)}" for c in chunks]
        self._send("".join(f"{line}\n\n" for line in lines).encode(), "text/event-stream")


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


PROPS = GOOD["/props"]
SERVER_CASES = {
    "props a list": ({"/props": [1, 2]}, "JSON object"),
    "props not JSON": ({"/props": b"<html>"}, "did not answer JSON"),
    "props nested deep": ({"/props": b"[" * 100_000}, "did not answer JSON"),
    "props endless": ({"/props": b"{" + b" " * (17 << 20)}, "larger than"),
    "default_generation_settings a string": ({"/props": PROPS | {"default_generation_settings": "x"}}, "default_gen"),
    "default_generation_settings a list": ({"/props": PROPS | {"default_generation_settings": [1]}}, "default_gen"),
    "n_ctx a string": ({"/props": PROPS | {"default_generation_settings": {"n_ctx": "abc"}}}, "n_ctx"),
    "n_ctx a float": ({"/props": PROPS | {"default_generation_settings": {"n_ctx": 1.5}}}, "n_ctx"),
    "n_ctx true": ({"/props": PROPS | {"default_generation_settings": {"n_ctx": True}}}, "n_ctx"),
    "model_path a number": ({"/props": PROPS | {"model_path": 5}}, "model_path"),
    "model_alias a list": ({"/props": PROPS | {"model_alias": ["a"]}}, "model_alias"),
    "no build_info": ({"/props": {"default_generation_settings": {}}}, "build_info"),
    "generation_settings a list": ({"probe": {"generation_settings": [1, 2]}}, "generation_settings"),
    "speculative.types a number": ({"probe": {"generation_settings": {"speculative.types": 3}}}, "speculative.types"),
    "probe a list": ({"probe": [1]}, "JSON object"),
    "apply-template without a prompt": ({"/apply-template": {"x": 1}}, "apply-template"),
    "apply-template prompt a list": ({"/apply-template": {"prompt": [1]}}, "apply-template"),
    "chunk a list": ({"stream": [[1, 2, 3]]}, "not an object"),
    "chunk a string": ({"stream": ['data: "x"']}, "not an object"),
    "chunk not JSON": ({"stream": ["data: {"]}, "lost"),
    "chunk nested deep": ({"stream": ["data: " + "[" * 100_000]}, "nested"),
    "timings a string": ({"stream": [{"content": "A", "tokens": [1], "timings": "x"}]}, "timings"),
    "timings draft_n a string": ({"stream": [{"content": "A", "timings": {"draft_n": "3"}}]}, "draft_n"),
    "timings prompt_ms a list": ({"stream": [{"content": "A", "timings": {"prompt_ms": [1]}}]}, "prompt_ms"),
    "tokens a string": ({"stream": [{"content": "A", "tokens": "abc"}]}, "tokens"),
    "tokens holding text": ({"stream": [{"content": "A", "tokens": ["a"]}]}, "tokens"),
    "content a number": ({"stream": [{"content": 5, "tokens": [1]}]}, "content"),
    "tokens_evaluated a string": ({"stream": [{"content": "A", "tokens_evaluated": "x"}]}, "tokens_evaluated"),
    "stop_type a list": ({"stream": [{"content": "A", "stop": True, "stop_type": [1]}]}, "stop_type"),
    "no final chunk": ({"stream": []}, "final chunk"),
}


@pytest.mark.parametrize("case", SERVER_CASES)
def test_a_server_answering_wrong_types_is_one_line_naming_the_field(server, monkeypatch, case):
    monkeypatch.setattr(run_command, "open_session", REAL["open_session"])  # it connects to the fake server
    answers, match = SERVER_CASES[case]
    monkeypatch.setattr(FakeServer, "answers", answers)
    refused("run", "--server", server, "hi", match=match)


def test_the_fake_server_answers_as_a_llama_server_when_nothing_is_wrong(server, monkeypatch):
    """The corpus's server cases fail for the field they change, not for the fake itself."""
    monkeypatch.setattr(run_command, "open_session", REAL["open_session"])
    monkeypatch.setattr(FakeServer, "answers", {"stream": GOOD["stream"] + [{"content": "", "stop": True}]})
    r = run_cli("run", "--server", server, "--no-color", "hi")
    assert r.returncode == 0 and r.stdout.startswith("A"), r.stderr


FINAL = {"content": "", "stop": True}
FAILED_STREAMS = {  # (chunks after a first good token, exit code, what the error line says)
    "a list mid-stream": ([[1, 2, 3]], 2, "not an object"),
    "broken timings mid-stream": ([{"content": "B", "tokens": [2], "timings": {"draft_n": "x"}}], 2, "draft_n"),
    "garbage mid-stream": (["data: {garbage", FINAL], 1, "lost"),
    "an error mid-stream": (['error: {"code": 500, "message": "slot failed"}'], 1, "slot failed"),
    "no final chunk": ([], 1, "final chunk"),
}


@pytest.mark.parametrize("json_out", [False, True])
@pytest.mark.parametrize("case", FAILED_STREAMS)
def test_run_exits_non_zero_when_the_server_s_stream_fails_part_way(server, monkeypatch, case, json_out):
    """The answer so far is shown, then one error line: exit 1, or 2 where it is no llama-server."""
    monkeypatch.setattr(run_command, "open_session", REAL["open_session"])
    chunks, code, match = FAILED_STREAMS[case]
    monkeypatch.setattr(FakeServer, "answers", {"stream": GOOD["stream"] + chunks})
    r = run_cli("run", "--server", server, "--no-color", *(["--json"] if json_out else []), "hi")
    assert r.returncode == code and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: ") and match in r.stderr.splitlines()[-1]
    if json_out:
        out = json.loads(r.stdout)
        assert out["text"] == "A" and out["stop_reason"] == "error" and match in out["error"]
    else:
        assert r.stdout.startswith("A")


@pytest.mark.parametrize("json_out", [False, True])
def test_run_with_stdout_on_a_full_device_is_one_line(server, monkeypatch, tmp_path, json_out):
    """`spectui run > /dev/full`: the first write fails; the answer stops, one line, exit 1
    (as every command's: tests/unit/test_full_stdout.py)."""
    # a speculating server with --metrics: it has nothing to note before the failing write
    speculating = {"content": " ", "generation_settings": {"speculative.types": "none,ngram-simple"}}
    metrics = (Path(__file__).parents[1] / "data/server_metrics_draft.txt").read_bytes()
    answers = {"stream": GOOD["stream"] * 3 + [FINAL], "probe": speculating, "/metrics": metrics}
    monkeypatch.setattr(FakeServer, "answers", answers)
    trace = tmp_path / "t.jsonl"
    with open("/dev/full", "w") as full:
        argv = ["run", "--server", server, "--trace", str(trace), *(["--json"] if json_out else []), "hi"]
        p = spectui_process(tmp_path, *argv, stdout=full)
    one_line(p, 1, "cannot write to stdout: No space left on device")
    assert str(trace) in p.stderr and trace.exists()


# --- run --trace ended by a signal or a closed pipe: the trace is written ---------------


@pytest.mark.model
@pytest.mark.parametrize("how,code", [("SIGINT", 0), ("SIGTERM", 143), ("SIGHUP", 129), ("closed pipe", 141)])
def test_run_writes_its_trace_when_ended_by_a_signal_or_a_closed_pipe(tmp_path, smol_path, how, code):
    """The answer stops after its round and the trace of what was generated is written."""
    trace = tmp_path / "t.jsonl"
    p = subprocess.Popen(
        [sys.executable, "-m", "spectui", "run", "-m", str(smol_path), "--temp", "0", "-n", "4000", "--ignore-eos"]
        + ["--no-color", "--trace", str(trace), "Count to 1000."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "SPECTUI_DATA_DIR": str(tmp_path), "SPECTUI_CONFIG_DIR": str(tmp_path)},
        cwd=ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background runner ignores it
    )
    try:
        assert p.stdout is not None and p.stdout.read(1)  # generating: the first token is out
        if how == "closed pipe":
            p.stdout.close()
        else:
            p.send_signal(getattr(signal, how))
        p.wait(timeout=120)
        err = p.stderr.read().decode() if p.stderr else ""
    finally:
        p.kill()
    if how == "SIGINT":  # Ctrl+C stops the answer: its summary, then exit 0 (README)
        assert p.returncode == 0 and "stopped (Ctrl+C)" in err and "Traceback" not in err, err
    else:
        lines = [line for line in err.strip().splitlines() if not line.startswith("note: ")]
        assert p.returncode == code and len(lines) == 1 and str(trace) in lines[0], err
        assert ("stdout was closed" if how == "closed pipe" else f"stopped by {how}") in lines[0]
    replayed = run_cli("replay", str(trace), "--export", str(tmp_path / "t.svg"))
    assert replayed.returncode == 0 and trace.stat().st_mode & 0o777 == 0o600, replayed.stderr


# --- a chats database whose rows another program or a bad copy broke -------------------

BROKEN_ROWS = {
    "segments not JSON": "UPDATE messages SET segments = '[[\"cut'",
    "segments of a wrong shape": "UPDATE messages SET segments = '[1, [2]]'",
    "stats not JSON": "UPDATE messages SET stats = '{'",
    "setup not JSON": "UPDATE chats SET setup = 'not json'",
    "setup a list": "UPDATE chats SET setup = '[\"model\"]'",
    "updated NaN": "UPDATE chats SET updated = 'NaN'",
    "updated infinite": "UPDATE chats SET updated = 9e999",
    "updated text": "UPDATE chats SET updated = 'yesterday', created = 'today'",
}


@pytest.mark.parametrize("case", BROKEN_ROWS)
def test_a_saved_chat_with_broken_rows_resumes_and_lists(dirs, case):
    """`chat --resume` reaches the models with what can be read (the chat says what could
    not, tests/tui/test_tui_safety.py); the saved-chats picker lists it."""
    import sqlite3

    from spectui.store import chat_store
    from spectui.store.chat_types import Message, new_chat
    from spectui.tui.screens.chats import when

    chat = new_chat("smollm2")
    chat.messages = [Message("user", "q"), Message("assistant", "a", [("a", "draft")], stats={"n_rounds": 1})]
    chat.setup = {"temp": 0.5}
    chat_store.save_chat(chat)
    chat_store.close()
    with sqlite3.connect(chat_store.db_path()) as db:
        db.execute(BROKEN_ROWS[case])
    db.close()
    r = run_cli("chat", "--resume", "--preset", "smollm2", reached=Loaded)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    listed, _ = chat_store.list_chats()
    assert [s.id for s in listed] == [chat.id] and when(listed[0])
    loaded = chat_store.load_chat(chat.id)
    assert [m.content for m in loaded.messages] == ["q", "a"] and bool(loaded.damaged) == ("updated" not in case)
    chat_store.close()

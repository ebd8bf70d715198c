"""Files that hold conversation text are created readable by their owner only (0600), as the
chat files are: traces (run --trace, F3, "Record every chat"), llama.cpp's log (--log-file)
and the crash log. A umask of 0 shows it: the mode comes from spectui, not the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from textual.app import App

from spectui.cli.setup_flags import open_log
from spectui.config import paths
from spectui.trace.format import TraceTurn, append_turn, read
from spectui.tui.themed import ThemedApp

TRACE = Path(__file__).resolve().parents[1] / "data" / "smollm2_turn.jsonl"


@pytest.fixture(autouse=True)
def open_umask(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path / "data"))
    old = os.umask(0)
    yield
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_written_trace_is_0600(tmp_path):
    assert mode(read(TRACE).write(tmp_path / "t.jsonl")) == 0o600


def test_a_recorded_chat_trace_is_0600(tmp_path):
    trace = read(TRACE)
    path = tmp_path / "traces" / "chat.jsonl"
    append_turn(path, trace.header, trace.turns[0])
    append_turn(path, trace.header, TraceTurn("again", trace.turns[0].events))
    assert mode(path) == 0o600 and len(read(path).turns) == 2


def test_the_log_file_is_0600_and_appended(tmp_path):
    path = tmp_path / "llama.log"
    for line in ("one\n", "two\n"):
        with open_log(str(path)) as f:
            f.write(line)
    assert mode(path) == 0o600 and path.read_text() == "one\ntwo\n"


def test_the_crash_log_is_0600(monkeypatch):
    monkeypatch.setattr(App, "_handle_exception", lambda self, error: None)  # Textual's own: ends the app
    ThemedApp()._handle_exception(RuntimeError("boom"))
    assert mode(paths.crash_log_path()) == 0o600 and "boom" in paths.crash_log_path().read_text()


def test_open_private_truncates_an_existing_file(tmp_path):
    path = tmp_path / "x"
    path.write_text("old text that is longer")
    with paths.open_private(path) as f:
        f.write("new")
    assert path.read_text() == "new"


def test_the_folders_spectui_creates_are_0700(tmp_path, monkeypatch):
    """The data dir and its traces folder (recording every chat), the crash log's folder, a
    bench --trace folder and the folders an export creates: a umask of 0 would leave them 0777."""
    from spectui.cli.bench_traces import folder as trace_folder

    trace = read(TRACE)
    append_turn(paths.traces_dir() / "chat.jsonl", trace.header, trace.turns[0])
    assert mode(paths.data_dir()) == 0o700 and mode(paths.traces_dir()) == 0o700
    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path / "other"))
    monkeypatch.setattr(App, "_handle_exception", lambda self, error: None)
    ThemedApp()._handle_exception(RuntimeError("boom"))
    assert mode(tmp_path / "other") == 0o700
    assert mode(trace_folder(str(tmp_path / "bench" / "traces"))) == 0o700 and mode(tmp_path / "bench") == 0o700
    paths.write_atomic(tmp_path / "exports" / "chat.md", "text")
    assert mode(tmp_path / "exports") == 0o700


def test_an_existing_folder_keeps_its_mode(tmp_path):
    (tmp_path / "shared").mkdir(mode=0o755)
    paths.private_dir(tmp_path / "shared" / "mine")
    assert mode(tmp_path / "shared") == 0o755 and mode(tmp_path / "shared" / "mine") == 0o700

"""SVG snapshots of deterministic screens: a saved chat (fixed overlay segments) in each
view, and the help screen. Live generation is left to test_tui.py: its timing varies.

Update after an intended change: pytest tests/test_tui_snapshots.py --snapshot-update
"""

from __future__ import annotations

import argparse

import pytest

from spectui import history, launch
from spectui.chat_command import add_parser
from spectui.engine import Session
from spectui.settings import save_settings
from spectui.tui import app as app_module
from spectui.tui.app import SpecApp
from spectui.tui.chat_input import ChatInput

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SPECTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(app_module, "memory_text", lambda: "GPU: none (CPU)\nRSS 100 MiB")


@pytest.fixture(scope="module")
def setup():
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return launch.resolve(parser.parse_args(["chat", "--preset", "smollm2", "--temp", "0", "-n", "48"]))


@pytest.fixture(scope="module")
def session(smol, setup):
    s = Session(smol, smol, setup.ctx_params(), setup.ctx_params(draft=True), setup.spec(), setup.sampling())
    yield s
    s.close()


def saved_chat() -> history.Chat:
    chat = history.new_chat("smollm2")
    segments = [
        ("Here is", "draft"), (" a", "target"), (" function", "draft"), (" that", "ngram"), (" adds", "target"),
        (" numbers", "rejected"), (" two", "resampled"), (" numbers:\n\n", "draft"), ("```python\n", "ngram"),
        ("def add(a, b):\n    return a + b\n", "draft"), ("```\n", "target"), ("It returns", "draft"),
        (" their", "rejected"), (" the", "target"), (" sum.", "draft"),
    ]
    chat.messages = [
        history.Message("user", "Write a python function that adds two numbers."),
        history.Message("assistant", "".join(t for t, k in segments if k != "rejected"), segments=segments,
                        stats={"n_generated": 31, "acceptance_rate": 0.82, "tok_per_s": 48.5, "stop_reason": "eos"},
                        config="draft-simple n-max 3"),
        history.Message("user", "Thanks!"),
        history.Message("assistant", "You're welc", segments=[("You're", "draft"), (" welc", "target")],
                        stopped=True, stats={"n_generated": 3, "stop_reason": "cancelled"},
                        config="ngram-mod n-max 16"),
    ]
    return chat


def steady(pilot) -> None:
    pilot.app.query_one(ChatInput).cursor_blink = False


def test_saved_chat_overlay(snap_compare, session, setup):
    session.configure(setup.spec())
    assert snap_compare(SpecApp(setup, session=session, chat=saved_chat()), terminal_size=SIZE, run_before=steady)


def test_saved_chat_rejected_hidden(snap_compare, session, setup):
    session.configure(setup.spec())
    save_settings({"show_rejected": False})
    assert snap_compare(SpecApp(setup, session=session, chat=saved_chat()), terminal_size=SIZE, run_before=steady)


def test_saved_chat_markdown_without_panel(snap_compare, session, setup):
    session.configure(setup.spec())
    save_settings({"show_overlay": False, "show_panel": False})
    assert snap_compare(SpecApp(setup, session=session, chat=saved_chat()), terminal_size=SIZE, run_before=steady)


def test_help_screen(snap_compare, session, setup):
    session.configure(setup.spec())
    assert snap_compare(SpecApp(setup, session=session), press=["f1"], terminal_size=SIZE, run_before=steady)

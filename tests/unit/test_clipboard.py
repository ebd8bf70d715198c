"""Copying out of the terminal: the desktop's clipboard tool or tmux's buffer where there is
one (fake tools on PATH here), and a notice that says where the text went."""

from __future__ import annotations

import shutil

import pytest

from spectui.tui.clipboard import copy_elsewhere, copy_notice

CAT = shutil.which("cat")  # found before PATH holds the fake tools only


def fake_tool(folder, name: str, out) -> None:
    """An executable `name` that saves its stdin to `out`."""
    path = folder / name
    path.write_text(f'#!/bin/sh\n{CAT} > "{out}"\n', encoding="utf-8")
    path.chmod(0o755)


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


def test_the_desktop_tool_and_tmux_buffer_get_the_text(bin_dir, tmp_path):
    fake_tool(bin_dir, "xclip", tmp_path / "clip")
    fake_tool(bin_dir, "tmux", tmp_path / "buffer")
    assert copy_elsewhere("héllo", {"DISPLAY": ":0", "TMUX": "/tmp/tmux-0/default,1,0"}) == ("xclip", True)
    assert (tmp_path / "clip").read_text(encoding="utf-8") == "héllo"
    assert (tmp_path / "buffer").read_text(encoding="utf-8") == "héllo"
    # xclip without a display cannot work, and outside tmux its buffer is left alone
    assert copy_elsewhere("x", {}) == (None, False)


def test_the_notice_says_where_the_text_went():
    assert copy_notice("the last answer", 31, "xclip", False, False) == (
        "Copied the last answer (31 characters) to the clipboard (xclip)."
    )
    in_tmux = copy_notice("the last answer", 31, None, True, True)
    assert "OSC 52" in in_tmux and "set -g set-clipboard on" in in_tmux and "paste buffer" in in_tmux
    assert not in_tmux.startswith("Copied")
    plain = copy_notice("its last code block", 5, None, False, False)
    assert plain.startswith("Sent its last code block (5 characters)") and "tmux" not in plain

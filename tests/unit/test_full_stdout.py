"""Every command with its stdout on a full device (`> /dev/full`): exit 1 and one line, no
traceback. The commands come from the parser, so a new one must be added to CASES. Most run
in this process with stdout a buffered /dev/full file, as a shell gives it; real processes
check the interpreter's own flush at exit, buffered and not (PYTHONUNBUFFERED)."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from spectui.cli.main import build_parser, main
from tests.models.test_plan_cli import cached  # noqa: F401  (plan prints from the recorded curve: no model)

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "smollm2_turn.jsonl"
SMOL = "smollm2-135m-instruct-q4_1"
FULL = "cannot write to stdout: No space left on device"
BENCH = {"schema": "spectui-bench/1", "partial": False, "interrupted": None, "protocol": {"n_predict": 4}}
ROW = {"config": "none", "group": "ko/qa", "tok_per_s": 10.0, "speedup": None, "acceptance_rate": None, "ttft_s": 0.2}

# each command as the parser names it: arguments that print without loading a model, and the exit code
CASES: dict[tuple[str, ...], tuple[list[str], int]] = {
    (): (["--version"], 1),
    ("chat",): (["chat", "--preset", "smollm2"], 2),  # refused without a terminal: nothing on stdout
    ("run",): (["run", "-m", SMOL, "-n", "4", "--temp", "0", "hi"], 1),  # a model: marked below
    ("replay",): (["replay", str(TRACE), "--export", "{tmp}/t.svg"], 0),  # says where it wrote on stderr
    ("bench",): (["bench", "compare", "{tmp}/a.json", "{tmp}/b.json"], 1),  # the tables a bench prints
    ("bench", "compare"): (["bench", "compare", "{tmp}/a.json", "{tmp}/b.json"], 1),
    ("plan",): (["plan", "--preset", "fast"], 1),
    ("models",): (["models"], 1),
    ("models", "list"): (["models", "list"], 1),
    ("models", "install"): (["models", "install", SMOL], 1),
    ("models", "verify"): (["models", "verify", SMOL], 1),
    ("models", "path"): (["models", "path", SMOL], 1),
    ("presets",): (["presets", "list"], 1),
    ("presets", "list"): (["presets", "list"], 1),
    ("presets", "show"): (["presets", "show", "fast"], 1),
}


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and sub-command the parser knows, as the words that name it."""
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += commands(sub, (*path, name))
    return found


def on_full_device(*argv: str) -> tuple[int, str]:
    """`spectui ARGV > /dev/full` in this process: (exit code, stderr)."""
    err = io.StringIO()
    with open("/dev/full", "w") as full, redirect_stdout(full), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return code, err.getvalue()


def one_line(code: int, err: str, want: int, match: str) -> None:
    lines = [line for line in err.strip().splitlines() if not line.startswith("note: ")]
    assert code == want and "Traceback" not in err and len(lines) <= 1, (code, err)
    assert match in err, err


def test_every_command_has_a_case():
    assert set(commands(build_parser())) == set(CASES)


@pytest.mark.parametrize("path", commands(build_parser()), ids=lambda p: " ".join(p) or "spectui")
def test_every_command_s_help_on_a_full_device_is_one_line(path):
    one_line(*on_full_device(*path, "--help"), 1, FULL)


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.model) if p == ("run",) else p for p in sorted(CASES)],
    ids=lambda p: " ".join(p) or "spectui",
)
def test_every_command_on_a_full_device_is_one_line(path, tmp_path, dirs, request):
    argv, code = CASES[path]
    if path == ("plan",):
        request.getfixturevalue("cached")
    for name in ("a", "b"):
        (tmp_path / f"{name}.json").write_text(json.dumps(BENCH | {"results": [ROW], "environment": {}}))
    one_line(*on_full_device(*(a.replace("{tmp}", str(tmp_path)) for a in argv)), code, FULL if code == 1 else "")


@pytest.mark.parametrize("argv,unbuffered", [(["--version"], False), (["presets", "show", "fast"], True)])
def test_the_interpreter_s_own_flush_at_exit_fails_nothing(tmp_path, argv, unbuffered):
    """A buffered write fails only at exit's flush, an unbuffered one at once: both one line, exit 1."""
    env = {"PATH": "/usr/bin:/bin", "SPECTUI_DATA_DIR": str(tmp_path), "SPECTUI_CONFIG_DIR": str(tmp_path)}
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-m", "spectui", *argv],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            cwd=ROOT,
            env=env | ({"PYTHONUNBUFFERED": "1"} if unbuffered else {}),
        )
    assert p.returncode == 1 and p.stderr == f"error: {FULL}\n", (p.returncode, p.stderr)

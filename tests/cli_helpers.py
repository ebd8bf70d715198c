"""`spectui ARGV` run in this process: the same `main` a user's command reaches, without the
half second each child process spends importing (tests/helpers/processes.py starts a real one,
where the process itself is what is tested), and `refused`, a refusal's one line and exit 2."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from unittest import mock

from spectui.cli.main import main


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run_cli(*argv: str, env: dict[str, str | None] | None = None, reached: type[BaseException] | None = None) -> Ran:
    """`env`: variables set on top of ours (None: unset); `reached`: an exception a test raises
    where the command got past its checks (it counts as exit code 0)."""
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ), redirect_stdout(out), redirect_stderr(err):
        for key, value in (env or {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        try:
            code = main(list(argv))
        except SystemExit as e:  # argparse's --help and its refusals
            code = e.code if isinstance(e.code, int) else 1
        except BaseException as e:
            if reached is None or not isinstance(e, reached):
                raise
            code = 0
    return Ran(code, out.getvalue(), err.getvalue())


class Loaded(Exception):
    """A command got past its checks to where the models load: its input was accepted (a test's
    stub of the loading raises it)."""


def refused(*argv: str, match: str) -> str:
    """`spectui ARGV` ends in exit 2 with one line (notes aside), no traceback, holding `match`:
    the words of the refusal expected. argparse's "unrecognized arguments" passes only where
    `match` names it: any one-line exit 2 would let a flag a command lost pass as refused."""
    assert match.strip(), "refused() needs the words of the refusal it expects"
    r = run_cli(*argv, reached=Loaded)
    err = r.stderr
    lines = [line for line in err.strip().splitlines() if not line.startswith("note: ")]
    assert r.returncode == 2, (r.returncode, err)
    assert "Traceback" not in err and len(lines) == 1, err
    assert match.lower() in err.lower(), err
    assert "unrecognized arguments" not in err or "unrecognized arguments" in match, err
    return err

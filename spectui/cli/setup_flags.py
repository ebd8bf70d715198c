"""The setup flags that chat, run and bench share, built from the Setup fields, and the
overrides a parsed command line gives `resolve.resolve`.

Defaults are None so that a preset's values show through unless a flag is given.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from spectui import spec_types
from spectui.config import presets
from spectui.config.paths import open_private
from spectui.config.setup import GROUPS, OPTIONS
from spectui.config.text import from_argv
from spectui.errors import UserError

LONG_CHOICES = 30  # characters of a flag's choices, past which its help lists them


def add_setup_flags(p: argparse.ArgumentParser, helps: dict[str, str] | None = None) -> None:
    """--preset, every Setup option by group, --spec-default and the diagnostics; `helps`:
    a command's own help for an option whose default it sets itself."""
    groups = {name: p.add_argument_group(name) for name in GROUPS}
    groups["models"].add_argument(
        "--preset", help="a preset name (spectui presets list) or a .toml file; without it, the one named default"
    )
    for name, o in OPTIONS.items():
        help_ = (helps or {}).get(name) or o.help_line(presets.shipped_defaults().get(name) if o.owned else None)
        metavar = None
        if len(",".join(o.choices)) > LONG_CHOICES:  # listed in the help: the flag's line then fits 80 columns
            metavar, help_ = "TYPE", f"{help_}; one of {', '.join(o.choices)}"
        if o.type is bool:  # a switch: --mmap and --no-mmap, as llama.cpp's; None: not given
            groups[o.group].add_argument(*o.flags, dest=name, action=argparse.BooleanOptionalAction, help=help_)
            continue
        groups[o.group].add_argument(
            *o.flags, dest=name, type=o.type, choices=o.choices or None, metavar=metavar, help=help_
        )
    groups["speculation"].add_argument(
        "--spec-default", action="store_true", help=f"{spec_types.SPEC_DEFAULT} with its defaults (as llama.cpp)"
    )
    v = p.add_argument_group("diagnostics")
    v.add_argument("--verbose", action="store_true", help="show llama.cpp's own log on stderr")
    v.add_argument("--log-file", help="append llama.cpp's log to this file")


def overrides_from(args: argparse.Namespace) -> dict:
    """The options given on the command line (--spec-default as the spec type it means)."""
    given = {k: v for k, v in vars(args).items() if k in OPTIONS and v is not None}
    for name in given:
        if OPTIONS[name].prose:  # text for the model, unlike the other strings (names and paths)
            given[name] = from_argv(given[name], OPTIONS[name].flag)
    if getattr(args, "spec_default", False):
        given["spec_type"] = spec_types.SPEC_DEFAULT
    return given


def open_log(name: str | Path | None) -> TextIO | None:
    """--log-file opened for appending, created 0600 (llama.cpp's log can quote prompts);
    None without one. A path that cannot be written is a UserError before any work."""
    if not name:
        return None
    try:
        return open_private(Path(name).expanduser(), "a")
    except OSError as e:
        raise UserError(f"cannot write the log file {name}: {e.strerror or e}") from e


def elements(text: str, sep: str, flag: str) -> list[str]:
    """A list flag's elements; an empty one (`3,,5`) is a typo that would measure less than asked."""
    parts = [x.strip() for x in text.split(sep)]
    if "" in parts:
        raise UserError(f"{flag} {text!r}: an empty element; give values separated by single '{sep}'")
    return parts


def levels_of(text: str, flag: str, top: int, unit: str) -> tuple[int, ...]:
    """A list of levels (`--concurrency 1,2,4` of plan and bench alike): whole numbers 1 to
    `top` in ASCII digits (int() would take "+1", "1_0" and other scripts' digits), sorted,
    each once. An element is quoted back cut short: it may be thousands of characters."""
    out = set()
    for part in elements(text, ",", flag):
        shown = part if len(part) <= 12 else f"{part[:12]}…"
        if not (part.isascii() and part.isdigit()):
            raise UserError(f"{flag}: {shown!r} is not a whole number; give e.g. 1,2,4")
        digits = part.lstrip("0")
        if len(digits) > len(str(top)) or not 1 <= int(digits or "0") <= top:
            raise UserError(f"{flag}: {shown} {unit}; give 1 to {top}")
        out.add(int(digits))
    return tuple(sorted(out))

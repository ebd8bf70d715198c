"""The setup flags that chat, run and bench share, built from the Setup fields, and the
overrides a parsed command line gives `resolve.resolve`.

Defaults are None so that a preset's values show through unless a flag is given.
"""

from __future__ import annotations

import argparse

from spectui.config.setup import GROUPS, OPTIONS
from spectui.config.text import from_argv


def add_setup_flags(p: argparse.ArgumentParser, helps: dict[str, str] | None = None) -> None:
    """--preset, every Setup option by group, --spec-default and the diagnostics; `helps`:
    a command's own help for an option whose default it sets itself."""
    groups = {name: p.add_argument_group(name) for name in GROUPS}
    groups["models"].add_argument("--preset", help="a preset name (spectui presets list) or a .toml file")
    for name, o in OPTIONS.items():
        help_ = (helps or {}).get(name, o.help)
        groups[o.group].add_argument(*o.flags, dest=name, type=o.type, choices=o.choices or None, help=help_)
    groups["speculation"].add_argument(
        "--spec-default", action="store_true", help="ngram-mod with its defaults (as llama.cpp)"
    )
    v = p.add_argument_group("diagnostics")
    v.add_argument("--verbose", action="store_true", help="show llama.cpp's own log on stderr")
    v.add_argument("--log-file", help="append llama.cpp's log to this file")


def overrides_from(args: argparse.Namespace) -> dict:
    """The options given on the command line (--spec-default as the spec type it means)."""
    given = {k: v for k, v in vars(args).items() if k in OPTIONS and v is not None}
    if "system" in given:  # text for the model, unlike the other strings (names and paths)
        given["system"] = from_argv(given["system"], "--system")
    if getattr(args, "spec_default", False):
        given["spec_type"] = "ngram-mod"
    return given

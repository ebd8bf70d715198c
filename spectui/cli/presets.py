"""`spectui presets list|show NAME`."""

from __future__ import annotations

import sys

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from spectui.bounded import CONFIG_BYTES
from spectui.cli import streams
from spectui.config import presets
from spectui.config.text import read_text
from spectui.errors import UserError


def add_parser(sub) -> None:
    p = sub.add_parser("presets", help="list and show presets (shipped and your own)")
    ps = p.add_subparsers(dest="presets_command", metavar="ACTION", required=True)
    ps.add_parser("list", help="every preset, yours overriding shipped ones by name").set_defaults(func=cmd_list)
    show = ps.add_parser("show", help="print a preset's TOML (valid as a preset file) and where it lives")
    show.add_argument("name")
    show.set_defaults(func=cmd_show)


def cmd_list(args) -> int:
    """A preset is its file's name: the table shows names, the two folders follow in full,
    so no path is cut. A file that cannot be used is left out with a warning (using it
    gives the error); a template's missing model files are its status, not an error."""
    err = Console(stderr=True, soft_wrap=True, highlight=False)
    t = Table(box=box.SIMPLE_HEAD)
    t.add_column("name", style="bold", overflow="fold")
    t.add_column("source")
    t.add_column("status")
    t.add_column("description", overflow="fold")
    for each in presets.listed():
        if (why := each.problem.removeprefix("cannot be used: ")) != each.problem:
            err.print(Text.assemble(("warning: ", "yellow"), f"preset '{each.name}' skipped: {why}"))
            continue
        status = Text(each.problem, "yellow") if each.problem else Text("ready", "green")
        t.add_row(each.name, "shipped" if each.shipped else "user", status, each.description)
    out = streams.console(highlight=False, soft_wrap=True)
    out.print(t)
    out.print(f"shipped presets: {presets.shipped_dir('presets')}/NAME.toml", style="dim")
    out.print(f"user presets (they win): {presets.user_presets_dir()}/NAME.toml", style="dim")
    return 0


def cmd_show(args) -> int:
    """The file's text as it is, under `#` comment lines, so `show NAME > p.toml` is a preset
    (plain writes: a console would wrap long lines)."""
    found = presets.available()
    if args.name not in found:
        raise UserError(f"unknown preset '{args.name}'; available: {', '.join(found)}")
    path, shipped = found[args.name]
    text = read_text(path, "preset", CONFIG_BYTES)
    lines = [f"# {path} ({'shipped' if shipped else 'user'})"]
    if shipped:
        lines.append(f"# to change it, copy it to {presets.user_presets_dir() / path.name}")
    try:
        presets.load_file(path, args.name, shipped)
    except UserError as e:
        lines.append("# not usable yet: " + " ".join(str(e).splitlines()))
    sys.stdout.write("\n".join(lines) + "\n" + text + ("" if text.endswith("\n") else "\n"))
    return 0

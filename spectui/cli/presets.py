"""`spectui presets list|show NAME`."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from spectui.config import presets
from spectui.errors import UserError


def add_parser(sub) -> None:
    p = sub.add_parser("presets", help="list and show presets (shipped and your own)")
    ps = p.add_subparsers(dest="presets_command", metavar="ACTION", required=True)
    ps.add_parser("list", help="every preset, yours overriding shipped ones by name").set_defaults(func=cmd_list)
    show = ps.add_parser("show", help="print a preset's TOML and where it lives")
    show.add_argument("name")
    show.set_defaults(func=cmd_show)


def cmd_list(args) -> int:
    console = Console()
    t = Table("name", "source", "status", "description", "file")
    for name, (path, shipped) in presets.available().items():
        try:
            preset = presets.load_file(path, name, shipped, check_models=False)
        except UserError as e:  # a broken user file
            t.add_row(name, "shipped" if shipped else "user", "[red]error[/]", str(e), str(path))
            continue
        missing = presets.missing_models(preset)
        status = "[yellow]needs your model files[/]" if missing else "ready"
        t.add_row(name, "shipped" if shipped else "user", status, preset.description, str(path))
    console.print(t)
    console.print(f"user presets: {presets.user_presets_dir()}", style="dim", highlight=False)
    return 0


def cmd_show(args) -> int:
    found = presets.available()
    if args.name not in found:
        raise UserError(f"unknown preset '{args.name}'; available: {', '.join(found)}")
    path, shipped = found[args.name]
    console = Console(highlight=False)
    console.print(f"# {path} ({'shipped' if shipped else 'user'})", style="dim")
    if shipped:
        console.print(f"# to change it, copy it to {presets.user_presets_dir() / path.name}", style="dim")
    console.print(path.read_text(encoding="utf-8"), markup=False, end="")
    try:
        presets.load_file(path, args.name, shipped)
    except UserError as e:
        console.print(f"# not usable yet: {e}", style="yellow", markup=False)
    return 0

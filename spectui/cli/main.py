"""Command line: `spectui [chat]`, `run`, `replay`, `bench`, `plan`, `models`, `presets`; one module
per command.

Flags follow llama.cpp where they overlap, so users' knowledge carries over.
"""

from __future__ import annotations

import argparse
import sys

from spectui import __version__
from spectui.cli import interrupt, streams
from spectui.errors import UserError

COMMANDS = ("chat", "run", "replay", "bench", "plan", "models", "presets")


class Parser(argparse.ArgumentParser):
    """A bad flag is one line, as every other user error: the usage block would bury it."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def _get_value(self, action, arg_string):
        """An empty value is an error, not the default: `--server ''` must not load a local
        model. The system prompt may be empty (none), and the prompt says so itself. A number
        that does not parse is refused in the words of every other check (options.number)."""
        from spectui.config.setup import OPTIONS  # built with the parser already
        from spectui.options import NUMBERS, number

        prose = (o := OPTIONS.get(action.dest)) is not None and o.prose  # the system prompt
        name = "/".join(action.option_strings) or action.metavar or action.dest
        if not arg_string.strip() and action.nargs != argparse.PARSER and not prose and action.dest != "prompt":
            self.error(f"argument {name}: an empty value; give one or leave it out")
        if action.type in NUMBERS:
            return number(action.type, arg_string, name)
        return super()._get_value(action, arg_string)


def build_parser() -> argparse.ArgumentParser:
    from spectui.cli import bench, chat, models, plan, presets, replay, run

    parser = Parser(
        prog="spectui",
        description="Chat with a local LLM and watch speculative decoding happen. "
        "Without a command, starts the chat (spectui chat).",
    )
    parser.add_argument("--version", action="version", version=f"spectui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for command in (chat, run, replay, bench, plan, models, presets):
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """A stdout that cannot be written (`> /dev/full`) ends any command, --help and --version
    included, with one line and exit 1, where Python would print a traceback or exit 120."""
    with streams.watched_stdout() as stdout:
        try:
            code = command(argv)
        except (OSError, SystemExit, streams.Unwritable) as e:  # SystemExit: --help and --version wrote
            if not stdout.failed():
                raise
            said = str(e) if isinstance(e, streams.Unwritable) else ""
        else:
            if not stdout.failed():
                return code
            said = ""
    say_error(f"cannot write to stdout: {stdout.failure}{said}")
    return 1


def command(argv: list[str] | None) -> int:
    """Ctrl+C anywhere (the imports of a start-up included) ends with 130 and no traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "chat")
    try:
        with interrupt.held():  # the command modules import llama.cpp
            parser = build_parser()
        args = parser.parse_args(argv)
        return args.func(args) or 0
    except UserError as e:
        say_error(str(e))
        return e.exit_code
    except KeyboardInterrupt:
        return 130


def say_error(message: str) -> None:
    from rich.console import Console
    from rich.text import Text

    Console(stderr=True, soft_wrap=True).print(Text.assemble(("error: ", "bold red"), message))


if __name__ == "__main__":
    sys.exit(main())

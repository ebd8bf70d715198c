"""`spectui chat` (the default command): the Textual chat app.

Everything that can fail on the user's input fails here, in the terminal, before the
app starts: bad flags or presets exit with one line, and embedded models are assembled
with a progress bar. The app itself then only loads model files, in a worker.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.console import Console

from spectui.cli.progress import ConsoleReport
from spectui.cli.setup_flags import add_setup_flags, open_log, overrides_from
from spectui.cli.streams import has_terminal
from spectui.errors import UserError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "chat",
        help="start the chat app",
        description="Chat with a local model and watch speculative decoding, token by token.",
    )
    p.add_argument("--resume", action="store_true", help="reopen the latest chat")
    add_setup_flags(p)
    p.set_defaults(func=main)


def main(args) -> int:
    if not has_terminal():  # the app would spin on a closed or piped input
        raise UserError("the chat needs a terminal (stdin and stdout); for one answer in a pipe use spectui run")
    from spectui.chat import memory_check
    from spectui.config import paths
    from spectui.config.resolve import resolve, restored
    from spectui.config.setup import kept_across_presets
    from spectui.launch.opening import checked_models
    from spectui.llama.runtime import configure_logging
    from spectui.plan import memory_projection
    from spectui.store import chat_store
    from spectui.tui.app import SpecApp

    overrides = overrides_from(args)
    setup = resolve(args.preset, overrides)
    err = Console(stderr=True)
    log_file = Path(args.log_file) if args.log_file else None
    if args.verbose and log_file is None:  # stderr belongs to the app's screen
        log_file = paths.llama_log_path()
        paths.private_dir(log_file.parent)
        err.print(f"note: llama.cpp's log goes to {log_file}", style="dim", highlight=False)
    configure_logging(args.verbose, open_log(log_file))
    restored_notes, not_imported = chat_store.import_unsaved()  # before --resume reads the latest chat
    notes = (*restored_notes, *(f"{why} (ctrl+l lists it)" for _, why in not_imported))
    chat = chat_store.latest_chat(last=chat_store.SHOWN) if args.resume else None
    if args.resume and chat is None:
        err.print("note: no saved chat to resume; starting a new one", style="dim", highlight=False)
    elif chat is not None and chat.setup:  # format 1 chats have none
        # The chat's models and settings, as it last ran; a flag given now wins, and a
        # model given now replaces the chat's models and the speculation that went with them.
        saved = kept_across_presets(chat.setup) if {"model", "model_draft"} & overrides.keys() else chat.setup
        setup, why = restored(saved | overrides, setup)
        if why:
            err.print(f"note: {why}", style="dim", highlight=False, soft_wrap=True)
    setup = replace(setup, notes=(*setup.notes, *notes))
    for note in setup.notes:  # the chat shows them too, once its models load
        err.print(f"note: {note}", style="dim", highlight=False)
    projected = False
    if not setup.server:
        # a missing, non-GGUF or cut file, or a pair that does not fit: exit 2 before the app
        # opens; its loading worker compares the vocabularies (open_session), which takes llama.cpp
        target, draft = checked_models(setup, ConsoleReport(err), vocabularies=False)
        projection, _ = memory_projection.for_setup(setup, target, draft)
        if projection is not None and not projection.fits:
            raise UserError(memory_check.refusal(projection, one_line=True))
        projected = projection is not None
    return SpecApp(setup, chat=chat, fit_checked=projected).run_reporting()

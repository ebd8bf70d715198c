"""Keeping the chat shown: its saves (the streaming answer's too), the files kept when saving
failed, the chat opened and exported, and its traces (each finished turn with the changes of
configuration it logged). What the store refuses here is said here, as a notice."""

from __future__ import annotations

from pathlib import Path

from spectui.chat.library import SHOWN
from spectui.chat.state import ChatState
from spectui.chat.turn import LiveTurn
from spectui.config import paths
from spectui.config.settings import Settings
from spectui.errors import UserError
from spectui.store import chat_import, chat_store, chat_types
from spectui.trace import format as trace_format
from spectui.trace.format import Trace, TraceTurn, append_turn
from spectui.words import plural


class Persistence:
    def __init__(self, state: ChatState, settings: Settings):
        """`settings`: the app's, read at each answer's end (`record_traces`)."""
        self.state = state
        self.settings = settings
        self.traced: list[TraceTurn] = []  # this chat's turns answered since it was opened
        self.unsaved = False  # the last save failed: quitting keeps the chat in a file the next start imports
        self.quitting = False  # the app is ending: a save that fails then is not tried again
        self._answer_failed = False  # the streaming answer could not be stored: said once per answer

    def save(self, turn: LiveTurn | None = None) -> None:
        """Store what changed in the chat; a streaming answer (`turn`) is saved as stopped until
        it ends. A failure is said, and `unsaved` stays set until a save succeeds. Once quitting,
        a failed save is not retried (a locked database would make each attempt wait)."""
        s = self.state
        if self.quitting and self.unsaved:
            return
        if turn is not None:
            turn.sync_stats()
        if not s.chat.messages:
            return
        if s.session is not None:  # what resuming the chat restores
            s.chat.setup = s.setup.values()
        try:
            chat_store.save_chat(s.chat)
        except UserError as e:
            self.unsaved = True
            s.notify(str(e), title="Chat not saved", severity="error")
        else:
            self.unsaved = False

    def start_answer(self, turn: LiveTurn) -> None:
        """An answer starts: saved at once (as stopped), its failures said anew."""
        self._answer_failed = False
        self.save(turn)

    def save_answer(self) -> None:
        """The streaming answer so far; a failure is said once per answer."""
        s = self.state
        if self.quitting and self.unsaved:  # a locked database would hold the quit at each update
            return
        try:
            chat_store.save_answer(s.chat)
        except UserError as e:
            self.unsaved = True
            if not self._answer_failed:
                self._answer_failed = True
                s.notify(f"{e}\nIt is saved when it ends.", title="Answer not saved yet", severity="warning")

    def keep_unsaved(self) -> Path | None:
        """At quit, when the last save failed: the chat in the first folder of `unsaved_dirs`
        that takes it, as JSON for the next start to import and as Markdown to read; the
        Markdown's path (the JSON's when only it was written), None when neither could be."""
        if not self.unsaved:
            return None
        for folder in paths.unsaved_dirs():
            try:
                kept = chat_import.write_unsaved(self.state.chat, folder)
            except UserError:
                continue
            try:
                return chat_types.export_markdown(self.state.chat, kept.with_suffix(".md"))
            except UserError:
                return kept
        return None

    def earlier_texts(self) -> list[tuple[str, str]]:
        """The stored messages before those read (a long chat opens at its end): the prompt's start."""
        try:
            return chat_store.texts_before(self.state.chat)
        except UserError as e:
            self.state.notify(f"{e}\nThis answer sees only the messages shown.", severity="warning")
            return []

    def open(self, chat_id: str) -> chat_types.Chat | None:
        """A saved chat, its last messages; None, with a notice, when it cannot be read."""
        try:
            return chat_store.load_chat(chat_id, last=SHOWN)
        except UserError as e:
            self.state.notify(str(e), severity="error")
            return None

    def say_damage(self) -> None:
        """When a chat opens: what of it the store could not read (it shows without that)."""
        if self.state.chat.damaged:
            self.state.notify(self.state.chat.damaged, title="Chat partly unreadable", severity="warning", timeout=12)

    def export_markdown(self) -> None:
        chat = self.state.chat
        if not chat.messages:
            self.state.notify("Nothing to export yet.", severity="warning")
            return
        try:
            whole = chat_store.load_chat(chat.id) if chat.earlier else chat
            path = paths.write_export(f"spectui-chat-{chat.id}.md", lambda p: chat_types.export_markdown(whole, p))
        except UserError as e:
            self.state.notify(str(e), title="Export failed", severity="error")
            return
        self.state.notify(str(path), title="Exported to Markdown", timeout=8)

    def forget_traces(self) -> None:
        """Another chat is shown: this one's traced turns go with it."""
        self.traced = []

    def record(self, turn: LiveTurn) -> None:
        """Keep the finished turn, with the configuration changes it logged, for the chat's
        trace, and append it to the chat's trace file when every chat is recorded."""
        s = self.state
        prompt = s.chat.messages[-2].content if len(s.chat.messages) > 1 else ""
        traced = TraceTurn(prompt, list(turn.events), list(turn.changes), memory=s.memory)
        self.traced.append(traced)
        if self.settings.record_traces:
            try:
                append_turn(paths.traces_dir() / f"{s.chat.id}.jsonl", self.trace_header("spectui chat"), traced)
            except UserError as e:
                s.notify(str(e), title="Trace not recorded", severity="warning")

    def save_trace(self) -> None:
        n = len(self.traced)
        if not n:
            self.state.notify("No answer in this chat since it was opened: nothing to trace yet.", severity="warning")
            return
        trace = Trace(self.trace_header("spectui chat"), self.traced)
        try:
            path = trace.write(paths.traces_dir() / f"spectui-trace-{self.state.chat.id}.jsonl")
        except UserError as e:
            self.state.notify(str(e), title="Trace not saved", severity="error")
            return
        self.state.notify(saved_trace_note(path), title=f"Saved the trace of {plural(n, 'answer')}", timeout=8)

    def trace_header(self, recorded_by: str) -> dict:
        """A trace's first line: the models and machine, and the settings in force now."""
        return trace_format.header(recorded_by, self.state.environment, self.state.setup.values())


def saved_trace_note(path: Path) -> str:
    """What a saved trace's toast says, f3's and the A/B view's alike: where it is (every trace
    goes to the data folder's traces/) and how to replay it."""
    return f"in the traces folder: {path}\nreplay it with: spectui replay {path}"

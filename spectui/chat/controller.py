"""The chat controller: one owner for the session, the setup in force, the conversation,
its streaming answer and its storing, the messages typed ahead, traces and the speed baseline.

It never touches a widget. Each method runs on the UI's thread and says what changed by
emitting updates (chat/updates.py); the work that blocks it hands on as an update whose
worker reports back: `Generate` to the chat screen (`add_events`, `turn_failed`), `Load` to
the app (`loading_status`, `session_loaded`, `session_failed`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from spectui.chat.panel import PanelState
from spectui.chat.streaming import TurnJob
from spectui.chat.turn import Baselines, LiveTurn
from spectui.chat.updates import (
    AnswerEnded,
    AnswerStarted,
    AnswerUpdated,
    ChatShown,
    ComposeText,
    ConfigShown,
    Generate,
    Load,
    MessageAdded,
    MessagesRemoved,
    Notice,
    OutboxChanged,
    PanelChanged,
    Severity,
    StatusLine,
    Update,
)
from spectui.config import describe, paths, presets
from spectui.config.embedded import CATALOG
from spectui.config.model_choice import model_name
from spectui.config.recent import remember_models
from spectui.config.resolve import resolve, restored
from spectui.config.settings import Settings
from spectui.config.setup import OPTIONS, Setup, kept_across_presets
from spectui.engine.events import Event, Round, TurnEnd, TurnStart
from spectui.engine.interface import ChatSession, GenerationLimits, SessionStatus, chat_messages
from spectui.errors import UserError
from spectui.spec_config import N_MAX_LIMIT, SpecConfig
from spectui.store import chat_import, chat_store, history
from spectui.trace import format as trace_format
from spectui.trace.format import ConfigChange, Trace, TraceTurn, append_turn

GENERATING = StatusLine((("● ", "$success"), ("generating", ""), ("  esc stops", "$text-muted")))
STOPPING = StatusLine((("stopping at the end of this round…", "$warning"),))


class ChatController:
    def __init__(
        self,
        setup: Setup,
        settings: Settings,
        emit: Callable[[Update], object],
        chat: history.Chat | None = None,
        session: ChatSession | None = None,
        environment: dict | None = None,
    ):
        """`settings`: the app's settings (read for `record_traces`); `session`: an
        open one to use (a test's), else the app loads `setup` on the first `Load`;
        `environment`: what traces record of that session's models and machine."""
        self.setup = replace(setup, spec=session.spec) if session else setup  # its spec is the session's
        self.settings = settings
        self.emit = emit
        self.chat = chat or history.new_chat(setup.preset)
        self.session = session
        self.environment = environment or {}
        self._owns_session = False  # only sessions this controller loaded are closed by it
        self.loading = False  # a load runs: messages queue until it ends
        self.comparing = False  # the A/B view runs the session: the chat and its configuration wait
        self.memory = ""  # the last memory reading, shown in the panel and kept in traces
        self.inspect = False  # record what the verifier saw (the inspector's data); chosen when a pair loads
        self._inspect_chosen = False  # shift+f7 was pressed: the person's choice stays from then on
        self.turn: LiveTurn | None = None  # the answer streaming now, or the last one
        self.queued: list[str] = []  # messages typed while the chat was busy, oldest first
        self.editing: history.Message | None = None  # the sent message the box holds for resending
        self.baselines = Baselines()
        self.traced: list[TraceTurn] = []  # this chat's turns answered since it was opened
        self.answered: list[LiveTurn] = []  # ... as live turns: their rounds, for the inspector
        self._changes: list[ConfigChange] = []  # configuration changes while the answer streams
        self._job: TurnJob | None = None
        self.unsaved = False  # the last save failed: quitting keeps the chat in a file the next start imports
        self.quitting = False  # the app is ending: a save that fails then is not tried again
        self._answer_failed = False  # the streaming answer could not be stored: said once per answer
        self._cut: tuple[str, int] = ("", 0)  # (chat, messages its prompt leaves out): said when it grows

    def _notify(
        self, text: str, title: str = "", severity: Severity = "information", timeout: float | None = None
    ) -> None:
        self.emit(Notice(text, title, severity, timeout))

    # --- the session and its configuration -----------------------------------------

    def status(self) -> SessionStatus | None:
        return self.session.status() if self.session else None

    def available_types(self) -> tuple[str, ...]:
        return self.session.available_types() if self.session else ()

    def need_session(self) -> ChatSession | None:
        """The session; None, with a notice, while the models load."""
        if self.session is None:
            self._notify("The models are still loading.", severity="warning")
        return self.session

    def configure(self, spec: SpecConfig) -> bool:
        """Speculate as `spec` from the next round, even mid-answer."""
        if self.comparing:
            self._notify(
                "The A/B view uses the models: choose its configurations there, or close it (esc).", severity="warning"
            )
            return False
        if (session := self.need_session()) is None:
            return False
        try:
            session.configure(spec)
        except UserError as e:
            self._notify(str(e), severity="error")
            return False
        self.setup = replace(self.setup, spec=spec)
        self._config_changed()
        return True

    def set_spec_type(self, spec_type: str) -> None:
        self.configure(self.setup.spec.with_types(spec_type))

    def cycle_spec_type(self, step: int) -> None:
        if self.need_session():
            types = self.available_types()
            current = self.setup.spec.types[0]
            i = types.index(current) if current in types else 0
            self.set_spec_type(types[(i + step) % len(types)])

    def toggle_inspect(self) -> None:
        """Inspect on or off: from the next round, each round records what the verifier saw at
        each draft (p, q, the decision, the target's alternatives), for the inspector."""
        if (session := self.need_session()) is None:
            return
        self.inspect = session.inspect = not self.inspect
        self._inspect_chosen = True
        self._notify(
            "Inspect on: the next answers record why each draft was accepted or rejected (f7 reads them; "
            "a llama-server's never do)"
            if self.inspect
            else "Inspect off",
            timeout=4,
        )

    def step_n_max(self, step: int) -> None:
        spec = self.setup.spec
        self.configure(spec.replace(draft_n_max=min(max(spec.draft_n_max + step, 1), N_MAX_LIMIT)))

    def _config_changed(self) -> None:
        if self.generating:
            self._changes.append(ConfigChange(time.perf_counter(), self.setup.spec.as_dict()))
        self.emit(ConfigShown())

    def header(self, narrow: bool = False) -> tuple[str, str]:
        """(the configuration, the models), or the app's name and what keeps it from a session;
        `narrow`: the models only, in the first place (a status strip shows the configuration).
        Where they do not fit, the header's ellipsis cuts them: a name keeps one form."""
        status = self.status()
        if status is None:
            return "spectui", "loading…" if self.loading else "no model loaded"
        spec = status.spec
        n_max = f"n-max {spec.draft_n_max} · " if spec.uses_n_max else ""
        config = f"{spec.label} · {n_max}verify {status.verify}"
        models = pair_line(model_name(status.target_path), model_name(status.draft_path) if status.draft_path else None)
        return (models, "") if narrow else (config, models)

    def panel_state(self) -> PanelState:
        status = self.status()
        events = self.turn.events if self.turn else []
        if status is None:  # loading: what the setup asks for
            spec = self.setup.spec
            return PanelState(spec=spec, verify=spec.verify, events=events, memory=self.memory)
        kept = self.baselines.get(status.target_path)
        return PanelState(
            spec=status.spec,
            verify=status.verify,
            events=events,
            baseline=kept,
            n_ctx=status.n_ctx,
            n_past=self._context_used(),
            memory=self.memory,
        )

    def _context_used(self) -> int | None:
        """This chat's tokens in the context (not the session's cache, which a new chat or
        the A/B view leaves holding other text); None: not counted until the next answer."""
        rounds = self.turn.rounds if self.turn else []
        if rounds:
            return rounds[-1].n_past
        return None if self.chat.messages else 0

    # --- sending, and what is typed ahead -----------------------------------------

    @property
    def generating(self) -> bool:
        """A turn's worker runs: from the turn's start to its end or failure, even when its chat
        was closed meanwhile (a second turn on the session must wait for it)."""
        return self._job is not None

    def idle(self, doing: str) -> bool:
        """Nothing runs that `doing` must wait for; else say what, and False."""
        if self.generating:
            self._notify(f"Stop the answer first (esc), then {doing}.", severity="warning")
        elif self.comparing:
            self._notify(f"Close the A/B view first (esc), then {doing}.", severity="warning")
        elif self.loading:
            self._notify(f"The models are loading: {doing} when they are ready.", severity="warning")
        return not (self.generating or self.comparing or self.loading)

    def submit(self, text: str) -> bool:
        """Enter in the box: send now, or queue while an answer streams or the models load.
        False: the text stays in the box (the A/B view is open, or an edit cannot resend)."""
        if self.comparing:
            self._notify("Close the A/B view first (esc); your message stays in the box.", severity="warning")
            return False
        if self.editing is not None:
            if not self.idle("resend"):
                return False
            self._cut_from(self.editing)
        if self.session is None or self.generating or self.loading:
            self.queued.append(text)
            self.emit(OutboxChanged(tuple(self.queued)))
        else:
            self._send(self.session, text)
        return True

    def _send(self, session: ChatSession, text: str) -> None:
        user = history.Message(role="user", content=text)
        self.chat.messages.append(user)
        self.emit(MessageAdded(user))
        self._start_turn(session)

    def send_queued(self) -> None:
        """The chat is free: send the oldest queued message, if any."""
        if self.queued and self.session is not None and not (self.generating or self.loading or self.comparing):
            text = self.queued.pop(0)
            self.emit(OutboxChanged(tuple(self.queued)))
            self._send(self.session, text)

    def edit_previous(self) -> None:
        """↑ in the empty box: take the last queued message back, else edit the last sent one."""
        if self.queued:
            text = self.queued.pop()
            self.emit(OutboxChanged(tuple(self.queued)))
            self.emit(ComposeText(text))
            return
        sent = [m for m in self.chat.messages if m.role == "user"]
        if sent:
            self.edit(sent[-1])

    def edit(self, message: history.Message) -> None:
        """Put a sent message in the box; submitting resends it and replaces what followed."""
        if not self.idle("edit a message"):
            return
        self.editing = message
        self.emit(ComposeText(message.content))
        later = len(self.chat.messages) - 1 - self.chat.messages.index(message)
        self.emit(
            StatusLine(
                (
                    ("✎ ", "$accent"),
                    ("editing: enter resends", ""),
                    (f" and replaces the {later} message{'s' * (later != 1)} after it" if later else "", "$text-muted"),
                    ("  esc cancels", "$text-muted"),
                )
            )
        )

    def cancel_edit(self) -> None:
        self.editing = None
        self.emit(ComposeText(""))
        self.emit(StatusLine())

    def editable(self) -> list[tuple[str, history.Message, str]]:
        """The sent messages, newest first: (its first line, the message, its place in the chat)."""
        n = len(self.chat.messages)
        return [
            (
                m.content.splitlines()[0][:80] if m.content.strip() else "(empty)",
                m,
                f"message {self.chat.earlier + i + 1} of {self.chat.earlier + n}",
            )
            for i, m in reversed(list(enumerate(self.chat.messages)))
            if m.role == "user"
        ]

    def _cut_from(self, message: history.Message) -> None:
        """Drop `message` and everything after it."""
        removed = frozenset(id(m) for m in self.chat.cut(self.chat.messages.index(message)))
        self.editing, self.turn = None, None
        self.emit(MessagesRemoved(removed))
        self.emit(StatusLine())

    # --- the answer ----------------------------------------------------------------

    def _start_turn(self, session: ChatSession) -> None:
        self.turn = LiveTurn(session.spec)
        said = self._earlier_texts() + [(m.role, m.content) for m in self.chat.messages]
        prompt = chat_messages(said, self.setup.system)
        self.chat.messages.append(self.turn.message)
        self.emit(AnswerStarted(self.turn))
        self._answer_failed = False
        self.save()
        self._changes = []
        self._job = TurnJob(session, prompt, GenerationLimits(n_predict=self.setup.n_predict))
        self.emit(GENERATING)
        self.emit(Generate(self._job))

    def add_events(self, events: list[Event]) -> None:
        """A batch of the streaming answer's events, from its worker."""
        turn = self.turn
        if turn is None:  # its chat was closed (deleted) while it ran: it only has to end
            if any(isinstance(e, TurnEnd) for e in events):
                self._job = None
                self.emit(StatusLine())
                self.send_queued()
            return
        if not events:
            return
        for event in events:
            turn.add(event)
            if isinstance(event, TurnStart) and event.n_left_out:
                self._say_cut(event)
        self.emit(AnswerUpdated(started=isinstance(events[0], TurnStart)))
        if not turn.running:
            self._job = None
            self._finish_turn(turn)
            return
        if self.quitting and self.unsaved:  # a locked database would hold the quit at each update
            return
        try:
            chat_store.save_answer(self.chat)
        except UserError as e:
            self.unsaved = True
            if not self._answer_failed:
                self._answer_failed = True
                self._notify(f"{e}\nIt is saved when it ends.", title="Answer not saved yet", severity="warning")

    def _say_cut(self, start: TurnStart) -> None:
        """Once a long chat outgrows the context, and each time its cut moves on."""
        if self._cut[0] == self.chat.id and start.n_left_out <= self._cut[1]:
            return
        self._cut = (self.chat.id, start.n_left_out)
        self._notify(
            f"This chat no longer fits the context (-c {start.n_ctx} tokens): answers leave out its first "
            f"{start.n_left_out} messages. They stay saved; a larger -c keeps more.",
            title="Long chat",
        )

    def _earlier_texts(self) -> list[tuple[str, str]]:
        """The stored messages before those read (a long chat opens at its end): the prompt's start."""
        try:
            return chat_store.texts_before(self.chat)
        except UserError as e:
            self._notify(f"{e}\nThis answer sees only the messages shown.", severity="warning")
            return []

    def turn_failed(self, error: str) -> None:
        """The engine raised before the turn's end: keep what it said, if anything."""
        self._notify(error, title="Generation failed", severity="error", timeout=10)
        turn, self.turn, self._job = self.turn, None, None
        removed = False
        if turn is not None and not turn.message.content and turn.message in self.chat.messages:
            self.chat.cut(self.chat.messages.index(turn.message))
            removed = True
        self.emit(AnswerEnded(removed=removed))
        self.save()
        self.emit(StatusLine())
        self.send_queued()

    def _finish_turn(self, turn: LiveTurn) -> None:
        self.emit(AnswerEnded(removed=False))
        self.save()
        end = turn.end
        if end is not None and end.error:
            self._notify(end.error, title=f"Answer ended: {end.stop_reason.value}", severity="error", timeout=10)
        if (status := self.status()) is not None:
            self.baselines.record(status.target_path, turn)
        self.answered.append(turn)
        self._trace(turn)
        self.emit(PanelChanged())
        self.emit(StatusLine())
        self.send_queued()

    def _trace(self, turn: LiveTurn) -> None:
        """Keep the finished turn for the chat's trace, and append it to the chat's trace
        file when every chat is recorded."""
        prompt = self.chat.messages[-2].content if len(self.chat.messages) > 1 else ""
        traced = TraceTurn(prompt, list(turn.events), self._changes, memory=self.memory)
        self.traced.append(traced)
        if self.settings.record_traces:
            try:
                append_turn(paths.traces_dir() / f"{self.chat.id}.jsonl", self.trace_header("spectui chat"), traced)
            except UserError as e:
                self._notify(str(e), title="Trace not recorded", severity="warning")

    def stop(self) -> bool:
        """Ask a streaming answer to end after this round; False when none streams."""
        if self._job is not None:
            self._job.stop.set()
            self._job.session.cancel()
            return True
        return False

    def stop_or_cancel_edit(self) -> None:
        """esc: stop the answer, else leave an edit."""
        if self.stop():
            self.emit(STOPPING)
        elif self.editing is not None:
            self.cancel_edit()

    def save(self) -> None:
        """Store what changed in the chat; a streaming answer is saved as stopped until it ends.
        A failure is said, and `unsaved` stays set until a save succeeds. Once quitting, a
        failed save is not retried (a locked database would make each attempt wait)."""
        if self.quitting and self.unsaved:
            return
        if self.turn is not None:
            self.turn.sync_stats()
        if not self.chat.messages:
            return
        if self.session is not None:  # what resuming the chat restores
            self.chat.setup = self.setup.values()
        try:
            chat_store.save_chat(self.chat)
        except UserError as e:
            self.unsaved = True
            self._notify(str(e), title="Chat not saved", severity="error")
        else:
            self.unsaved = False

    def keep_unsaved(self) -> Path | None:
        """At quit, when the last save failed: the chat in the first folder of `unsaved_dirs`
        that takes it, as JSON for the next start to import and as Markdown to read; the
        Markdown's path (the JSON's when only it was written), None when neither could be."""
        if not self.unsaved:
            return None
        for folder in paths.unsaved_dirs():
            try:
                kept = chat_import.write_unsaved(self.chat, folder)
            except UserError:
                continue
            try:
                return history.export_markdown(self.chat, kept.with_suffix(".md"))
            except UserError:
                return kept
        return None

    def regenerate(self) -> None:
        if (session := self.need_session()) is None or not self.idle("regenerate"):
            return
        messages = self.chat.messages
        if messages and messages[-1].role == "assistant":
            self.emit(MessagesRemoved(frozenset(id(m) for m in self.chat.cut(len(messages) - 1))))
        if not messages or messages[-1].role != "user":
            self._notify("Nothing to regenerate yet: send a message first.", severity="warning")
            return
        self._start_turn(session)

    # --- chats ---------------------------------------------------------------------

    def _show(self, chat: history.Chat) -> None:
        if self.editing is not None:  # the edit belonged to the chat that goes
            self.cancel_edit()
        self.chat = chat
        self.turn, self.traced, self.answered = None, [], []
        self.emit(ChatShown(chat))
        self.emit(PanelChanged())

    def new_chat(self) -> None:
        if self.idle("start a new chat"):
            self._show(history.new_chat(self.setup.preset))

    def open_chat(self, chat_id: str) -> None:
        """Open a saved chat (its last messages) on the models and settings it ran with."""
        if not self.idle("open another chat"):
            return
        try:
            chat = chat_store.load_chat(chat_id, last=chat_store.SHOWN)
        except UserError as e:
            self._notify(str(e), severity="error")
            return
        self._show(chat)
        self._notify(f"Opened “{chat.title or chat.id}”", timeout=3)
        self.say_damage()
        self._restore_setup(chat)

    def say_damage(self) -> None:
        """When a chat opens: what of it the store could not read (it shows without that)."""
        if self.chat.damaged:
            self._notify(self.chat.damaged, title="Chat partly unreadable", severity="warning", timeout=12)

    def chats_changed(self, renamed: dict[str, str], deleted: set[str], open_id: str | None = None) -> None:
        """The saved chats picker renamed or deleted chats (keep the open one in step), and
        maybe picked one to open."""
        if self.chat.id in renamed:
            self.chat.title = renamed[self.chat.id]  # so its next save keeps the name
        if self.chat.id in deleted:
            self.stop()  # an answer to a deleted chat has nowhere to go
            self._show(history.new_chat(self.setup.preset))
        if open_id is not None:
            self.open_chat(open_id)

    def export_markdown(self) -> None:
        if not self.chat.messages:
            self._notify("Nothing to export yet.", severity="warning")
            return
        try:
            whole = chat_store.load_chat(self.chat.id) if self.chat.earlier else self.chat
            path = paths.write_export(f"spectui-chat-{self.chat.id}.md", lambda p: history.export_markdown(whole, p))
        except UserError as e:
            self._notify(str(e), title="Export failed", severity="error")
            return
        self._notify(str(path), title="Exported to Markdown", timeout=8)

    def save_trace(self) -> None:
        if not self.traced:
            self._notify("No answer in this chat since it was opened: nothing to trace yet.", severity="warning")
            return
        trace = Trace(self.trace_header("spectui chat"), self.traced)
        try:
            path = paths.write_export(f"spectui-trace-{self.chat.id}.jsonl", trace.write)
        except UserError as e:
            self._notify(str(e), title="Trace not saved", severity="error")
            return
        self._notify(
            f"{path}\nreplay it with: spectui replay {path.name}",
            title=f"Saved the trace of {len(self.traced)} answer{'s' * (len(self.traced) != 1)}",
            timeout=8,
        )

    def last_answer(self) -> str | None:
        """The last answer's text (never rejected tokens); None, with a notice, when there is none."""
        answer = next((m for m in reversed(self.chat.messages) if m.role == "assistant"), None)
        if answer is None or not answer.content:
            self._notify("No answer to copy yet.", severity="warning")
            return None
        return answer.content

    def last_rounds(self) -> tuple[list[Round], str] | None:
        """The rounds of the last answer of this session, and its configuration label; None,
        with a notice, before the first."""
        turn = self.turn
        if turn is None or not turn.rounds:
            self._notify(
                "No rounds yet: the round details show the last answer given in this session.", severity="warning"
            )
            return None
        return turn.rounds, turn.message.config

    def trace_header(self, recorded_by: str) -> dict:
        """A trace's first line: the models and machine, and the settings in force now."""
        return trace_format.header(recorded_by, self.environment, self.setup.values())

    # --- loading, presets and settings ----------------------------------------------

    def load(self, setup: Setup, models: tuple[str, str | None] | None = None) -> None:
        """Load `setup` (on `models`, when given) in the app's worker; the loaded pair
        stays until the new one is ready (messages typed meanwhile wait for it)."""
        self.loading = True
        self.emit(Load(setup, models))

    def loading_status(self, text: str) -> None:
        self.emit(StatusLine((("◌ ", "$accent"), (text, ""), ("…", ""))))
        if self.session is None:
            self.emit(ConfigShown())

    def session_loaded(self, session: ChatSession, setup: Setup, environment: dict) -> None:
        self.loading = False
        self.close()  # the old pair, now that the new one works
        # the session's spec wins: a server fixes its own speculation
        self.session, self.setup = session, replace(setup, spec=session.spec)
        self.environment, self._owns_session = environment, True
        if not self._inspect_chosen:  # on where its cost is measured, llama.cpp on the CPU (docs/inspect.md)
            self.inspect = not environment.get("llama_cpp", {}).get("gpu_offload", False)
        session.inspect = self.inspect  # kept across a switch of models
        self.chat.preset = self.chat.preset or setup.preset
        for note in setup.notes:
            self._notify(note, timeout=8)
        files = [v for v in (setup.model, setup.model_draft) if v and v not in CATALOG]
        if files:
            try:
                remember_models(*files)
            except UserError as e:
                self._notify(str(e), title="Recent models not saved", severity="warning")
        self.emit(StatusLine())
        self.emit(ConfigShown())
        self.send_queued()

    def session_failed(self, error: str) -> None:
        self.loading = False
        if self.session is not None:  # a switch failed: the loaded pair stays
            self.emit(StatusLine())
            self._notify(
                f"{error}\nStill on {self.header()[1]}.", title="Models not switched", severity="error", timeout=15
            )
            self.send_queued()
            return
        self.emit(ConfigShown())
        self.emit(StatusLine(((f"could not load the models: {error}", "$error"),)))
        self._notify(error, title="Loading failed", severity="error", timeout=15)

    def close(self) -> None:
        """Free a session this controller loaded (a test's own session stays open)."""
        if self.session is not None and self._owns_session:
            self.session.close()
        self.session = None

    def load_preset(self, name: str) -> None:
        """Resolve the preset now (bad files fail here, with the reason), load it in a worker.
        The preset sets the models, the speculation and what else its file names; every other
        setting stays as it is now (from the command line, f10 or the resumed chat). Once
        loaded, a notice lists what the switch changed."""
        if not self.idle("switch presets"):
            return
        try:
            own = presets.load(name).values
            kept = {k: v for k, v in kept_across_presets(self.setup.values()).items() if k not in own}
            setup = resolve(name, kept)
        except UserError as e:
            self._notify(str(e), title=f"Preset {name}", severity="error", timeout=10)
            return
        changed = describe.changes(self.setup.values(), setup.values())
        said = f"Preset {name}: " + ("\n".join(["", *changed]) if changed else "nothing changed")
        self.load(replace(setup, notes=(*setup.notes, said)))

    def save_preset(self, name: str) -> None:
        spec = self.setup.spec
        try:
            path = presets.save_user(
                name, self.setup.values(), f"saved from the chat: {spec.label}, n-max {spec.draft_n_max}"
            )
        except UserError as e:
            self._notify(str(e), severity="error")
            return
        self._notify(str(path), title=f"Saved preset {name}", timeout=6)

    def apply_settings(self, values: dict) -> None:
        """Speculation from the next round, sampling from the next answer; the system prompt
        and n-predict are read per answer."""
        try:
            setup = self.setup.with_values(values)
        except UserError as e:  # a value the settings screen let through but the setup refuses
            self._notify(str(e), title="Settings not changed", severity="error")
            return
        changed = describe.changes(self.setup.values(), setup.values())
        if self._apply(setup):
            self._notify("\n".join(changed) or "nothing changed", title="Settings changed", timeout=4)

    def _apply(self, setup: Setup) -> bool:
        """Run the loaded models with `setup`'s settings (no reload)."""
        if (session := self.need_session()) is None:
            return False
        try:
            session.configure(setup.spec)
        except UserError as e:
            self._notify(str(e), severity="error")
            return False
        session.set_sampling(setup.sampling())
        self.setup = setup
        self._config_changed()
        return True

    def switch_models(self, target: str, draft: str | None) -> None:
        """Load this pair in the background; the current one stays until it is ready."""
        if self.idle("switch models"):
            self.load(self.setup, (target, draft))

    def _restore_setup(self, chat: history.Chat) -> None:
        """An opened chat's models and settings, as it last ran; the models are reloaded only
        when they (or how they load) differ."""
        setup, why = restored(chat.setup, self.setup)
        if why:
            self._notify(why, title="Chat opened on the current models", severity="warning", timeout=10)
        if setup.values() == self.setup.values():
            return
        if self.session is None or any(
            getattr(setup, k) != getattr(self.setup, k) for k, f in OPTIONS.items() if f.group == "models"
        ):
            self.load(setup)
        else:
            self._apply(setup)

    # --- the A/B view --------------------------------------------------------------

    def start_compare(self) -> ChatSession | None:
        """The session for the A/B view, which is its own until `end_compare`; None (with a
        notice) while something else needs it."""
        if self.comparing or (session := self.need_session()) is None or not self.idle("compare"):
            return None
        self.comparing = True
        return session

    def end_compare(self) -> None:
        self.comparing = False
        self.emit(PanelChanged())


def pair_line(target: str, draft: str | None) -> str:
    """The loaded pair, each model by the name the catalog and the pickers give it."""
    return f"{target} (no draft model)" if draft is None else f"{target} ⇠ draft {draft}"

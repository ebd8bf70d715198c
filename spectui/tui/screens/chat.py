"""The chat screen: transcript, input, stats panel. It renders what the chat's parts (spectui/chat/) emit, each
update in the Textual message that carries it, and forwards keys to the part that acts; each answer streams on the
llama thread, whose events come back as messages for the conversation."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Future
from dataclasses import replace
from functools import partial
from typing import cast

from textual.app import ComposeResult
from textual.binding import ActiveBinding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, Static

from spectui.chat import updates as up
from spectui.chat.controller import ChatController
from spectui.chat.starters import BY_KEY
from spectui.chat.streaming import start_turn
from spectui.config.settings import Settings, panel_setting
from spectui.tui.clipboard import copy_and_say
from spectui.tui.commands import WIDE_FOOTER, bindings
from spectui.tui.header import header, status_spans
from spectui.tui.messages import ChatUpdate, TurnEvents, TurnFailed
from spectui.tui.screens.chats import ChatsScreen, Picked
from spectui.tui.screens.inspecting import InspectsChat
from spectui.tui.screens.rounds import RoundsScreen
from spectui.tui.themed import ThemedApp
from spectui.tui.widgets.chat_input import ChatInput
from spectui.tui.widgets.markdown import last_code_block
from spectui.tui.widgets.message import AssistantMessage, UserMessage
from spectui.tui.widgets.queue import Outbox
from spectui.tui.widgets.side_pane import PANEL_EVERY_S
from spectui.tui.widgets.stats_panel import StatsPanel, StatusStrip
from spectui.tui.widgets.transcript import Transcript

QUIT_WINDOW_S = 2.0  # a second ctrl+c within this long quits
NARROW = 100  # columns below which the panel is a status line and the header names only the models


class ChatScreen(InspectsChat):
    BINDINGS = bindings(chat=True)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW, "-wide")]  # -narrow: app.tcss swaps the panel

    def __init__(self, controller: ChatController, settings: Settings):
        """`settings`: the app's view settings (overlay, rejected tokens, panel)."""
        super().__init__()
        self.controller, self.settings = controller, settings
        self.conversation, self.switcher = controller.conversation, controller.switcher  # the parts the keys reach
        self._answer: AssistantMessage | None = None
        self._turn: Future | None = None  # the last turn on the llama thread
        self._last_panel = self._last_interrupt = 0.0
        self._shown = False  # composed and mounted (updates posted before then wait in the queue)

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="body"):
            with Vertical(id="chat"):
                yield Transcript(self.controller.library.earlier_than, id="transcript")
                yield Static(id="status")
                yield StatusStrip(id="compact")
                yield Outbox(id="outbox")
                yield ChatInput(id="input", placeholder="Ask anything · enter sends · ctrl+j new line · ? help")
            yield StatsPanel(id="panel")
        yield Footer()

    async def on_mount(self) -> None:
        self.refresh_panel()
        self.query_one("#status", Static).display = False
        transcript = self.query_one(Transcript)
        transcript.outlook = self.switcher.outlook()  # the card's word on speed here, before its first answer
        await transcript.show(self.controller.state.chat, self.settings.show_overlay, self.settings.show_rejected)
        self.query_one(ChatInput).focus()
        self.query_one(ChatInput).starters = not self.controller.state.chat.messages
        self._show_header()
        self._shown = True

    # --- rendering the parts' updates ----------------------------------------------

    async def on_chat_update(self, msg: ChatUpdate) -> None:
        """Show an update of the chat's parts; one in order after the other, since Textual
        handles a screen's messages one at a time and waits for each handler's mounts. Those
        this screen does not show (notices, loading, measuring) bubble up to the app."""
        try:
            if await self._show_update(msg.update):
                msg.stop()
        except NoMatches:  # the app is closing: its widgets go before a late update
            msg.stop()

    async def _show_update(self, update: up.Update) -> bool:
        overlay, rejected = self.settings.show_overlay, self.settings.show_rejected
        box = self.query_one(ChatInput)
        match update:
            case up.AnswerUpdated(growth=growth, started=started):
                if self._answer is not None:
                    await self._answer.grow(growth)
                if started or time.monotonic() - self._last_panel >= PANEL_EVERY_S:
                    self.refresh_panel()  # the turn's start takes the panel to its live layout at once
            case up.MessageAdded(message=message):
                box.starters = False
                await self.query_one(Transcript).add(UserMessage(message))
            case up.AnswerStarted(turn=turn):
                self._answer = AssistantMessage(turn.message, overlay, rejected, streaming=True)
                await self.query_one(Transcript).add(self._answer)
                box.cursor_blink = False  # a blink is a repaint; keep the CPU for the model
            case up.AnswerEnded(removed=removed):
                box.cursor_blink = True
                if self._answer is not None:
                    await (self._answer.remove() if removed else self._answer.finish())
            case up.Generate(job=job):
                post = self.post_message
                self._turn = start_turn(job, lambda e: post(TurnEvents(e)), lambda error: post(TurnFailed(error)))
            case up.StatusLine():
                status, spans = self.query_one("#status", Static), status_spans(update)
                status.update(Content.assemble(*spans))
                status.display = bool(spans)
            case up.ChatShown(chat=chat):
                self._answer = None
                box.starters = not chat.messages
                await self.query_one(Transcript).show(chat, overlay, rejected)
            case up.MessagesRemoved(ids=ids):
                await self.query_one(Transcript).remove_messages(set(ids))
            case up.OutboxChanged(texts=texts, until=until):
                self.query_one(Outbox).show(texts, until)
            case up.ComposeText(text=text):
                box.clear()
                box.insert(text)
                box.focus()
            case up.ConfigShown():
                self.query_one(Transcript).show_outlook(self.switcher.outlook())
                self._show_header()
                self.refresh_panel()
            case up.PanelChanged():
                self.refresh_panel()
            case _:
                return False
        return True

    async def on_unmount(self) -> None:
        """The app is closing: a streaming answer stops after its round, and the app ends once
        it has (the models are freed only after the llama thread is done with them)."""
        if self._turn is not None and not self._turn.done():
            self.conversation.stop()
            await asyncio.wrap_future(self._turn)

    def on_turn_events(self, msg: TurnEvents) -> None:
        self.conversation.add_events(msg.events)

    def on_turn_failed(self, msg: TurnFailed) -> None:
        self.conversation.turn_failed(msg.error)

    def _show_header(self) -> None:
        """The configuration and the models; narrow, the models only and a compact footer."""
        narrow = self.size.width < NARROW
        self.title, self.sub_title = header(self.controller.state, narrow)
        footer = self.query_one(Footer)
        if footer.compact != narrow:
            footer.compact = narrow
            self.refresh_bindings()

    def on_resize(self) -> None:
        if self._shown:
            self._show_header()

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """What the footer shows: on a narrow terminal, without the keys it has no room for
        (they still work)."""
        active = super().active_bindings
        if self.size.width >= NARROW:
            return active
        return {
            key: a._replace(binding=replace(a.binding, show=False)) if a.binding.action in WIDE_FOOTER else a
            for key, a in active.items()
        }

    def refresh_panel(self) -> None:
        self.set_class(not self.settings.show_panel, "-no-panel").set_class(not self.settings.show_strip, "-no-strip")
        try:
            panel, strip = self.query_one(StatsPanel), self.query_one(StatusStrip)
        except NoMatches:  # the app is closing: its widgets go before a late memory reading
            return
        self._last_panel = time.monotonic()
        panel.state = strip.state = self.conversation.panel_state()

    def on_screen_resume(self) -> None:
        if self._shown:
            self.refresh_panel()  # back from the A/B view, which ran the session

    # --- keys ------------------------------------------------------------------------

    async def on_chat_input_submitted(self, event: ChatInput.Submitted) -> None:
        """Send, or queue while the chat is busy; the text stays in the box when it cannot go."""
        if self.conversation.submit(event.text):
            self.query_one(ChatInput).clear()

    def on_chat_input_edit_previous(self) -> None:
        self.conversation.edit_previous()

    def on_chat_input_starter_chosen(self, event: ChatInput.StarterChosen) -> None:
        self.conversation.submit(BY_KEY[event.key].prompt)

    def action_edit_message(self) -> None:
        entries = [(text, partial(self.conversation.edit, m), where) for text, m, where in self.conversation.editable()]
        if not entries:
            self.notify("No message to edit yet.", severity="warning")
            return
        self.app.search_commands(entries, placeholder="Edit and resend which message?")

    def action_spec_type(self, step: int) -> None:
        self.switcher.cycle_spec_type(step)

    def action_n_max(self, step: int) -> None:
        self.switcher.step_n_max(step)

    def action_stop(self) -> None:
        self.conversation.stop_or_cancel_edit()

    async def action_interrupt(self) -> None:
        """ctrl+c: copy a selection in the input, else stop the answer, else quit if the
        last ctrl+c was a moment ago (a stray press never loses the app)."""
        box = self.query_one(ChatInput)
        last, self._last_interrupt = self._last_interrupt, time.monotonic()
        if box.selected_text:
            box.action_copy()
        elif self.controller.state.generating:
            self.conversation.stop_or_cancel_edit()
        elif self._last_interrupt - last < QUIT_WINDOW_S:
            await self.app.action_quit()
        else:
            self.notify("Press ctrl+c again to quit.", timeout=QUIT_WINDOW_S)

    def action_new_chat(self) -> None:
        self.controller.new_chat()

    def action_regenerate(self) -> None:
        self.conversation.regenerate()

    def action_chats(self) -> None:
        self.app.push_screen(ChatsScreen(self.controller.library, self.controller.state.chat.id), self._chats_closed)

    def _chats_closed(self, picked: Picked | None) -> None:
        if picked is not None:
            self.controller.chats_changed(picked.renamed, picked.deleted, picked.open)

    def action_export(self) -> None:
        self.controller.persistence.export_markdown()

    def action_save_trace(self) -> None:
        self.controller.persistence.save_trace()

    def action_copy_answer(self, code: bool = False) -> None:
        """Copy the last answer's text (never rejected tokens), or its last code block."""
        text = self.conversation.last_answer()
        if text is None:
            return
        what = "its last code block" if code else "the last answer"
        if code and (text := last_code_block(text)) is None:
            self.notify("The last answer has no code block.", severity="warning")
            return
        self.notify(copy_and_say(text, what, self.app.copy_to_clipboard), timeout=6)

    def action_rounds(self) -> None:
        if (last := self.conversation.last_rounds()) is not None:
            self.app.push_screen(RoundsScreen(*last), self.inspect_round)

    # --- view settings ---------------------------------------------------------------

    def _toggle(self, setting: str) -> None:
        cast(ThemedApp, self.app).remember(setting, not getattr(self.settings, setting))

    async def _redraw_answers(self) -> None:
        overlay, rejected = self.settings.show_overlay, self.settings.show_rejected
        with self.app.batch_update():
            for w in self.query(AssistantMessage):
                await w.set_view(overlay, rejected)

    async def action_toggle_overlay(self) -> None:
        self._toggle("show_overlay")
        await self._redraw_answers()
        self.notify("Overlay on" if self.settings.show_overlay else "Overlay off: answers as Markdown", timeout=2)

    async def action_toggle_rejected(self) -> None:
        self._toggle("show_rejected")
        await self._redraw_answers()
        shown = self.settings.show_rejected
        note = "" if self.settings.show_overlay else " (visible with the overlay on)"
        self.notify(f"Rejected tokens {'shown' if shown else 'hidden'}{note}", timeout=2)

    def action_toggle_panel(self) -> None:
        """The panel, or below NARROW columns its strip: each width keeps its own choice."""
        self._toggle(panel_setting(self.has_class("-narrow")))
        self.refresh_panel()

"""The chat screen's sending side: type-ahead, editing and resending.

Text is never thrown away: Enter while an answer streams (or the models load) queues the
message in the outbox, sent in order when the chat is free; ↑ in the empty box takes the
last queued message back, or puts the last sent one in the box to edit, and Enter resends
it, replacing the conversation after it. A mixin of ChatScreen, whose chat, transcript,
turn and status line it uses.
"""

from __future__ import annotations

from functools import partial

from textual.content import Content

from spectui.config import history
from spectui.tui.widgets.chat_input import ChatInput
from spectui.tui.widgets.message import UserMessage
from spectui.tui.widgets.queue import Outbox


class Composing:
    editing: history.Message | None = None  # the sent message the box holds for resending

    @property
    def outbox(self) -> Outbox:
        return self.query_one(Outbox)

    async def on_chat_input_submitted(self, event: ChatInput.Submitted) -> None:
        """Send now; while an answer streams or the models load, queue it (sent in order
        when the chat is free). Text stays in the box until it is sent or queued."""
        box = self.query_one(ChatInput)
        if self.app.comparing:
            self.notify("Close the A/B view first (esc); your message stays in the box.", severity="warning")
            return
        if self.editing is not None:
            if not self.idle("resend"):
                return
            await self._cut_from(self.editing)
        box.clear()
        if self.session is None or self.generating or self.app.loading:
            self.outbox.add(event.text)
            return
        await self._send(event.text)

    async def _send(self, text: str) -> None:
        user = history.Message(role="user", content=text)
        self.chat.messages.append(user)
        await self.transcript.add(UserMessage(user))
        await self._start_turn()

    async def send_queued(self) -> None:
        """The chat is free: send the oldest queued message, if any."""
        if self.outbox.texts and self.session is not None and not (
                self.generating or self.app.loading or self.app.comparing):
            await self._send(self.outbox.pop(0))

    def on_chat_input_edit_previous(self) -> None:
        if self.outbox.texts:  # take the last queued message back to change it
            self.query_one(ChatInput).insert(self.outbox.pop(-1))
            return
        sent = [m for m in self.chat.messages if m.role == "user"]
        if sent:
            self.edit_message(sent[-1])

    def edit_message(self, message: history.Message) -> None:
        """Put a sent message in the box; enter resends it and replaces what followed."""
        if not self.idle("edit a message"):
            return
        self.editing = message
        box = self.query_one(ChatInput)
        box.clear()
        box.insert(message.content)
        box.focus()
        later = len(self.chat.messages) - 1 - self.chat.messages.index(message)
        self.status_line = Content.assemble(("✎ ", "$accent"), "editing: enter resends",
                                            (f" and replaces the {later} message(s) after it" if later else "",
                                             "$text-muted"), ("  esc cancels", "$text-muted"))

    def cancel_edit(self) -> None:
        self.editing = None
        self.query_one(ChatInput).clear()
        self.status_line = ""

    async def _cut_from(self, message: history.Message) -> None:
        """Drop `message` and everything after it, from the chat and the transcript."""
        cut = self.chat.messages.index(message)
        removed = {id(m) for m in self.chat.messages[cut:]}
        del self.chat.messages[cut:]
        await self.transcript.remove_messages(removed)
        self.editing, self.turn, self.status_line = None, None, ""

    def action_edit_message(self) -> None:
        entries = [(m.content.splitlines()[0][:80] if m.content.strip() else "(empty)", partial(self.edit_message, m),
                    f"message {i + 1} of {len(self.chat.messages)}")
                   for i, m in reversed(list(enumerate(self.chat.messages))) if m.role == "user"]
        if not entries:
            self.notify("No message to edit yet.", severity="warning")
            return
        self.app.search_commands(entries, placeholder="Edit and resend which message?")

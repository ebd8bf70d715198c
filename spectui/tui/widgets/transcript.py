"""The chat transcript: a welcome card on an empty chat, then one widget per message,
following the newest text unless the reader scrolls up."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from spectui.chat.starters import STARTERS
from spectui.config.history import Chat
from spectui.tui.widgets.message import AssistantMessage, UserMessage
from spectui.tui.widgets.overlay import legend_lines


def welcome() -> Content:
    lines = [
        Content.styled("spectui", "bold $primary"),
        Content(
            "Watch speculative decoding as the answer streams: drafted tokens the target accepted are "
            "coloured by where they came from; rejected drafts show struck through."
        ),
        Content(""),
        *legend_lines(),
        Content(""),
        Content.styled("Try one: press its number (or type your own question)", "bold"),
        *(
            Content.assemble((f" {s.key} ", "bold $accent"), (s.title, "bold"), (f": watch {s.watch}", "$text-muted"))
            for s in STARTERS
        ),
        Content(""),
        Content.styled(
            "enter sends · ctrl+j new line · ctrl+t spec type · ctrl+↑/↓ n-max · ? help · ctrl+p commands",
            "$text-muted",
        ),
    ]
    return Content("\n").join(lines)


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    Transcript #welcome {
        margin: 1 2;
        padding: 1 2;
        border: round $primary 40%;
        width: 1fr;
        max-width: 96;
        height: auto;
    }
    """

    async def show(self, chat: Chat, overlay: bool, rejected: bool) -> None:
        """Rebuild from a chat (start, new chat, open chat)."""
        await self.remove_children()
        if not chat.messages:
            await self.mount(Static(welcome(), id="welcome"))
        for m in chat.messages:
            if m.role == "user":
                await self.mount(UserMessage(m))
            elif m.role == "assistant":
                await self.mount(AssistantMessage(m, overlay, rejected))
        self.follow()

    async def add(self, widget: UserMessage | AssistantMessage) -> None:
        for w in self.query("#welcome"):
            await w.remove()
        await self.mount(widget)
        self.follow()

    async def remove_messages(self, ids: set[int]) -> None:
        """Remove the widgets of these history messages (by id(), as an edit cuts them)."""
        await self.remove_children([w for w in self.children if id(getattr(w, "message", None)) in ids])

    def follow(self) -> None:
        self.scroll_end(animate=False)
        self.anchor()

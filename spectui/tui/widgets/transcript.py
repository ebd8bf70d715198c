"""The chat transcript: a welcome card on an empty chat, then one widget per message,
following the newest text unless the reader scrolls up.

Only the last messages are mounted (at most MOUNTED), so a long chat opens and streams as
fast as a short one; scrolling to the top mounts earlier ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.containers import Grid, Vertical, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from spectui.chat.library import SHOWN
from spectui.chat.outlook import Outlook, watch
from spectui.chat.starters import STARTERS, Starter
from spectui.engine import noise
from spectui.store.chat_types import Chat, Message
from spectui.tui.widgets.message import AssistantMessage, UserMessage
from spectui.tui.widgets.overlay import legend_lines

MOUNTED = SHOWN  # as many as a chat opens with: a new message unmounts the oldest, so every turn lays out as many


OUTLOOK_STYLES = {
    noise.PAYS: "bold $success",
    noise.LOSES: "bold $warning",
    noise.WITHIN: "bold",
    noise.UNKNOWN: "bold $accent",
}


def outlook_line(seen: Outlook | None) -> Content:
    return Content.styled(seen.line, OUTLOOK_STYLES[seen.side]) if seen else Content("")


def starter_text(s: Starter, seen: Outlook | None) -> Content:
    return Content.assemble((s.title, "bold"), (f": watch {watch(s, seen)}", "$text-muted"))


def welcome(seen: Outlook | None) -> Vertical:
    """The empty chat's card: what the colours mean, speed on this machine as the plan predicts
    it (chat/outlook.py), and the starters, each in a grid row so that its wrapped lines hang
    under its text, not under its key."""
    intro = [
        Content.styled("spectui", "bold $primary"),
        Content(
            "Watch speculative decoding as the answer streams: drafted tokens the target accepted are "
            "coloured by where they came from; rejected drafts show struck through."
        ),
        Content(""),
        *legend_lines(),
    ]
    cells: list[Static] = []
    for s in STARTERS:
        cells.append(Static(Content.styled(f" {s.key}", "bold $accent")))
        cells.append(Static(starter_text(s, seen), id=f"starter-{s.key}"))
    keys = "enter sends · ctrl+j new line · ctrl+t spec type · ctrl+↑/↓ n-max · ? help · ctrl+p commands"
    outlook = Static(outlook_line(seen), id="welcome-outlook")
    outlook.display = seen is not None
    return Vertical(
        Static(Content("\n").join(intro)),
        outlook,
        Static(Content.styled("Try one: press its number (or type your own question)", "bold"), id="welcome-try"),
        Grid(*cells, id="starters"),
        Static(Content.styled(keys, "$text-muted"), id="welcome-keys"),
        id="welcome",
    )


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    Transcript #earlier {
        width: 1fr;
        content-align: center middle;
        color: $text-muted;
    }
    Transcript #welcome {
        margin: 1 2;
        padding: 1 2;
        border: round $primary 40%;
        width: 1fr;
        max-width: 96;
        height: auto;
    }
    Transcript #starters {
        grid-size: 2;
        grid-columns: 3 1fr;
        grid-rows: auto;
        height: auto;
    }
    Transcript #welcome-keys, Transcript #welcome-outlook, Transcript #welcome-try {
        margin: 1 0 0 0;
    }
    """

    chat: Chat | None = None
    view = (True, True)  # (overlay, rejected) of the answers mounted
    outlook: Outlook | None = None  # what the welcome card says of speed here

    def __init__(self, earlier: Callable[[Chat, Message, int], list[Message]], id: str) -> None:
        """`earlier`: up to n messages before one, as the chat library reads them from the store."""
        super().__init__(id=id)
        self.earlier = earlier

    async def show(self, chat: Chat, overlay: bool, rejected: bool) -> None:
        """Rebuild from a chat (start, new chat, open chat): its last SHOWN messages."""
        self.chat, self.view = chat, (overlay, rejected)
        await self._unmount(list(self.children))
        if not chat.messages:
            await self.mount(welcome(self.outlook))
        await self.mount_all(self._widgets(chat.messages[-SHOWN:]))
        self._mark_earlier()
        self.follow()

    def _widgets(self, messages: list[Message]) -> list[UserMessage | AssistantMessage]:
        overlay, rejected = self.view
        return [
            UserMessage(m) if m.role == "user" else AssistantMessage(m, overlay, rejected)
            for m in messages
            if m.role in ("user", "assistant")
        ]

    def _messages(self) -> list[UserMessage | AssistantMessage]:
        return [w for w in self.children if isinstance(w, UserMessage | AssistantMessage)]

    def _mark_earlier(self) -> None:
        """The line at the top while earlier messages are not mounted."""
        mounted = self._messages()
        more = self.chat is not None and bool(
            self.chat.earlier or (mounted and self.chat.messages and mounted[0].message is not self.chat.messages[0])
        )
        line = self.query("#earlier")
        if more and not line:
            self.mount(Static("↑ earlier messages load as you scroll up", id="earlier"), before=0)
        elif not more:
            line.remove()

    async def load_earlier(self) -> None:
        """Mount up to SHOWN messages before the first one mounted (read from the store
        when the chat's loaded ones run out), keeping the reader's place."""
        mounted = self._messages()
        if self.chat is None or not mounted:
            return
        first = mounted[0]
        answers = (w for w in mounted if isinstance(w, AssistantMessage))
        self.view = next(((w.overlay, w.show_rejected) for w in answers), self.view)  # as toggled since
        older = self.earlier(self.chat, first.message, SHOWN)
        if older:
            await self.mount_all(self._widgets(older), before=first)
            self.call_after_refresh(self.scroll_to_widget, first, top=True, animate=False)
        self._mark_earlier()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value == 0 and old_value > 0 and self.query("#earlier"):
            self.call_later(self.load_earlier)

    def show_outlook(self, seen: Outlook | None) -> None:
        """The welcome card's word on speed, for the configuration in force (kept for the next card)."""
        self.outlook = seen
        for card in self.query("#welcome"):
            line = card.query_one("#welcome-outlook", Static)
            line.update(outlook_line(seen))
            line.display = seen is not None
            for s in STARTERS:
                card.query_one(f"#starter-{s.key}", Static).update(starter_text(s, seen))

    async def add(self, widget: UserMessage | AssistantMessage) -> None:
        await self._unmount(list(self.query("#welcome")))
        await self.mount(widget)
        mounted = self._messages()
        if len(mounted) > MOUNTED:
            await self._unmount(mounted[: len(mounted) - MOUNTED])
            self._mark_earlier()
        self.follow()

    async def remove_messages(self, ids: set[int]) -> None:
        """Remove the widgets of these history messages (by id(), as an edit cuts them)."""
        await self._unmount([w for w in self.children if id(getattr(w, "message", None)) in ids])

    async def _unmount(self, widgets: Sequence[Widget]) -> None:
        """Remove widgets, first dropping their rendered lines (refresh() empties a widget's styles
        cache): Textual's lru_cache on StylesCache.get_inner_outer keeps a removed widget's cache alive."""
        for w in widgets:
            for each in (w, *w.walk_children(Widget)):
                each.refresh()
        await self.remove_children(widgets)

    def follow(self) -> None:
        self.scroll_end(animate=False)
        self.anchor()

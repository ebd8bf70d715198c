"""Transcript widgets: a user message, and an assistant answer that shows either the
speculation overlay or Markdown, from its history message or, streaming, what its updates carry."""

from __future__ import annotations

from typing import cast

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Region
from textual.selection import Selection
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from spectui.chat.inspector import saved_kinds
from spectui.chat.turn import Growth
from spectui.engine.overlay import REJECTED, add_segments
from spectui.store.chat_types import Message
from spectui.tui.widgets.markdown import MARKED, AnswerMarkdown, ends_in_code, render_markdown
from spectui.tui.widgets.overlay import selected_answer, slice_segments, split_point
from spectui.words import plural

CHUNK_CHARS = 1500  # a streaming answer is cut into widgets about this long, at newlines
GROW_LINES = 8  # a streaming chunk grows this many lines at a time (fewer layout passes)


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage {
        height: auto;
        padding: 0 1;
        border-left: outer $primary;
        background: $boost;
        color: $foreground;
        width: auto;
        max-width: 100%;
        margin: 1 0 0 8;
    }
    """

    def __init__(self, message: Message):
        super().__init__(Content(message.content), classes="message user")
        self.message = message


class AnswerChunk(Widget):
    """A piece of an answer in the overlay view.

    Streaming is the hot path, so a redraw is kept as small as the change: an answer is
    cut into chunks and only the last one redraws; within it only the lines from the
    previous last line on are repainted (text is only appended, and wrapping earlier
    lines does not depend on later text); and while streaming the chunk grows
    GROW_LINES at a time, so a layout pass (a whole-screen repaint) is rare.
    Markdown blocks are rendered over the colours; `in_code`: the chunk starts inside a
    code block that an earlier chunk opened.
    """

    DEFAULT_CSS = "AnswerChunk { height: auto; }"

    def __init__(
        self, segments: list[tuple[str, str]], show_rejected: bool, streaming: bool = False, in_code: bool = False
    ):
        super().__init__(classes="chunk")
        self.segments = segments
        self.show_rejected = show_rejected
        self.streaming = streaming
        self.in_code = in_code
        self.mark: tuple[int, int] | None = None  # characters of `segments` under the inspector's cursor
        self._content = Content("")
        self._lines = 0  # wrapped lines of the content last drawn

    def render(self) -> Content:
        return self._content

    def on_mount(self) -> None:
        self.redraw()

    def on_resize(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        old, self._content = self._content, render_markdown(self.segments, self.show_rejected, self.in_code, self.mark)
        width = self.size.width
        if not width:
            self.refresh(layout=True)
            return
        lines = self._content.get_height(self.styles, width)  # type: ignore[arg-type]  # as Textual's Widget does
        if self.streaming:
            height = -(-lines // GROW_LINES) * GROW_LINES
            fits = self.styles.height is not None and self.styles.height.cells == height
            if not fits:
                self.styles.height = height
        else:
            fits = lines == self.size.height
        if not fits:
            self.refresh(layout=True)
        elif self._content.plain.startswith(old.plain):
            first = max(self._lines - 1, 0)
            self.refresh(Region(0, first, width, max(lines - first, 1)))
        else:
            self.refresh()
        self._lines = lines

    def marked_line(self) -> int:
        """The wrapped line the highlight starts on (0 without one)."""
        start = min((s.start for s in self._content.spans if s.style == MARKED), default=0)
        if not start or not self.size.width:
            return 0
        return self._content[: start + 1].get_height(self.styles, self.size.width) - 1  # type: ignore[arg-type]

    def settle(self) -> None:
        """Streaming is over (for this chunk): back to its exact height."""
        if self.streaming:
            self.streaming = False
            self.styles.height = "auto"
            self.redraw()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selected_answer(self.segments, self.show_rejected, selection), "\n"


class AssistantMessage(Vertical):
    """One answer. While it streams, it is handed what each batch added (`grow`) a few dozen times
    a second at most: the overlay redraws its last chunk, Markdown gets the new text."""

    DEFAULT_CSS = """
    AssistantMessage {
        height: auto;
        padding: 0 1;
        border-left: outer $spec-draft 50%;
        margin: 1 4 0 0;
    }
    AssistantMessage .answer {
        height: auto;
        margin: 0;
        padding: 0;
    }
    AssistantMessage .chunk {
        height: auto;
    }
    AssistantMessage Markdown {
        background: transparent;
    }
    AssistantMessage MarkdownFence {
        overflow-x: hidden;  /* its code wraps: Textual scrolls it, with no bar and no key */
        padding: 0 2;  /* not the code's: a folded word lost characters to its left padding */
    }
    AssistantMessage MarkdownFence > Label {
        width: 1fr;
        padding: 1 0;
    }
    AssistantMessage .meta {
        height: auto;
        color: $text-muted;
        text-style: italic;
    }
    """

    def __init__(self, message: Message, overlay: bool, show_rejected: bool, streaming: bool = False):
        super().__init__(classes="message assistant")
        self.message = message
        self.segments, self.text = list(message.segments), message.content  # what this widget shows
        self.overlay, self.show_rejected, self.streaming = overlay, show_rejected, streaming
        self._chunks = Vertical(classes="answer")
        self._markdown = AnswerMarkdown(classes="answer")
        self._meta = Static(classes="meta")
        self._md_stream: MarkdownStream | None = None
        self._md_len = 0  # characters of the content the Markdown widget has been given
        self._frozen = 0  # characters of the segments in chunks before the last one

    def compose(self) -> ComposeResult:
        yield from (self._chunks, self._markdown, self._meta)

    async def on_mount(self) -> None:
        await self.set_view(self.overlay, self.show_rejected)

    async def set_view(self, overlay: bool, show_rejected: bool) -> None:
        """Switch between overlay and Markdown, re-rendering what it shows."""
        self.overlay, self.show_rejected = overlay, show_rejected
        self._chunks.display = overlay
        self._markdown.display = not overlay
        await self._stop_stream()
        await self._chunks.remove_children()
        self._frozen = 0
        if overlay:
            await self._draw_overlay()
        else:
            self._md_len = len(self.text)
            await self._markdown.show_whole(self.text)
        self._update_meta()

    async def _draw_overlay(self) -> None:
        """Freeze full chunks, then redraw the last one (mounting it if needed)."""
        tail = slice_segments(self.segments, self._frozen)
        while (cut := split_point(tail, CHUNK_CHARS)) is not None:
            await self._set_last_chunk(slice_segments(tail, 0, cut))
            self._last_chunk().settle()
            self._frozen += cut + 1
            answer = "".join(t for t, k in slice_segments(self.segments, 0, self._frozen) if k != REJECTED)
            await self._chunks.mount(AnswerChunk([], self.show_rejected, self.streaming, ends_in_code(answer)))
            tail = slice_segments(tail, cut + 1)
        await self._set_last_chunk(tail)

    def _last_chunk(self) -> AnswerChunk:
        return cast(AnswerChunk, self._chunks.children[-1])  # the container holds chunks only

    async def _set_last_chunk(self, segments: list[tuple[str, str]]) -> None:
        if not self._chunks.children:
            await self._chunks.mount(AnswerChunk(segments, self.show_rejected, self.streaming))
            return
        last = self._last_chunk()
        last.segments = segments
        last.redraw()

    def mark(self, span: tuple[int, int] | None) -> None:
        """Highlight characters [start, end) of the message's segments (the inspector's token),
        or nothing; in the overlay view only."""
        pos = 0
        for chunk in self._chunks.query_children(AnswerChunk):
            size = sum(len(text) for text, _ in chunk.segments)
            local = None
            if span is not None and span[0] < pos + size and span[1] > pos:
                local = (max(span[0] - pos, 0), min(span[1] - pos, size))
            if local != chunk.mark:
                chunk.mark = local
                chunk.redraw()
            pos += size + 1  # a chunk's boundary drops the newline it was cut at

    def show_mark(self) -> None:
        """Scroll the transcript to the highlighted token's line (a chunk is many lines long),
        once the layout is done: the line's place is read from it."""
        chunk = next((c for c in self._chunks.query_children(AnswerChunk) if c.mark is not None), None)
        scroll = self.parent
        if chunk is None or not isinstance(scroll, Widget):
            return
        y, widget = chunk.marked_line(), chunk.parent
        y += chunk.virtual_region.y
        while widget is not scroll and isinstance(widget, Widget):  # up to the transcript's own space
            y += widget.virtual_region.y
            widget = widget.parent
        scroll.scroll_to_region(Region(0, y, 1, 1), animate=False, immediate=True)

    async def grow(self, growth: Growth) -> None:
        """Append what a batch of the answer's events added (its update carries it), and draw it."""
        add_segments(self.segments, growth.segments)
        self.text += growth.text
        if self.overlay:
            await self._draw_overlay()
        elif len(self.text) > self._md_len:
            if self._md_stream is None:
                self._md_stream = Markdown.get_stream(self._markdown)
            await self._md_stream.write(self.text[self._md_len :])
            self._md_len = len(self.text)

    async def finish(self) -> None:
        """The turn ended: the engine's final text, as its history message holds it, and the stats line."""
        self.streaming = False
        self.text = self.message.content
        await self.grow(Growth())
        for chunk in self._chunks.query_children(AnswerChunk):
            chunk.settle()
        await self._stop_stream()
        if not self.overlay:  # the whole answer once more: its unfenced code is known only now
            self._md_len = len(self.text)
            await self._markdown.show_whole(self.text)
        self._update_meta()

    async def _stop_stream(self) -> None:
        if self._md_stream is not None:
            await self._md_stream.stop()
            self._md_stream = None

    def _update_meta(self) -> None:
        self._meta.update(meta_line(self.message, self.streaming))


def meta_line(m: Message, streaming: bool) -> Content:
    """The small line under an answer: configuration, size, acceptance, speed, its kinds of
    rejection (inspected), state."""
    parts: list[Content | str] = [m.config_label] if m.config else []
    s = m.stats
    if streaming:
        parts.append(Content.styled("generating…", "$accent"))
    elif s:
        parts.append(plural(s.get("n_generated", 0), "token"))
        if s.get("acceptance_rate") is not None:
            parts.append(f"{s['acceptance_rate']:.0%} accepted")
        if s.get("tok_per_s") is not None:
            parts.append(f"{s['tok_per_s']:.1f} tok/s")
        if kinds := saved_kinds(s):
            parts.append(kinds)
    if not streaming and s.get("stop_reason") == "n-predict":
        parts.append(Content.styled("cut off at the answer limit (n-predict)", "$warning"))
    if m.stopped and not streaming:
        reason = s.get("stop_reason") if s else None
        said = f" ({reason})" if reason and reason != "cancelled" else ""
        parts.append(Content.styled("stopped" + said, "$warning"))
    return Content(" · ").join(parts)

"""Transcript widgets: a user message, and an assistant answer that shows either the
speculation overlay or Markdown, both rebuilt from the history message alone."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.selection import Selection
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from spectui.history import Message
from spectui.tui.overlay_view import overlay_content, selected_answer


class UserMessage(Static):
    def __init__(self, message: Message):
        super().__init__(Content(message.content), classes="message user")
        self.message = message


class AnswerText(Static):
    """The overlay view of an answer."""

    def __init__(self, message: Message, show_rejected: bool):
        super().__init__(classes="answer")
        self.message = message
        self.show_rejected = show_rejected

    def redraw(self) -> None:
        self.update(overlay_content(self.message.segments, self.show_rejected))

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selected_answer(self.message.segments, self.show_rejected, selection), "\n"


class AssistantMessage(Vertical):
    """One answer. While it streams, the app calls `refresh_answer` a few dozen times a
    second at most; the overlay text is rebuilt, Markdown only gets the new text."""

    def __init__(self, message: Message, overlay: bool, show_rejected: bool, streaming: bool = False):
        super().__init__(classes="message assistant")
        self.message = message
        self.overlay = overlay
        self.streaming = streaming
        self._answer = AnswerText(message, show_rejected)
        self._markdown = Markdown(classes="answer")
        self._meta = Static(classes="meta")
        self._md_stream: MarkdownStream | None = None
        self._md_len = 0  # characters of the content the Markdown widget has been given

    def compose(self) -> ComposeResult:
        yield self._answer
        yield self._markdown
        yield self._meta

    async def on_mount(self) -> None:
        await self.set_view(self.overlay, self._answer.show_rejected)

    async def set_view(self, overlay: bool, show_rejected: bool) -> None:
        """Switch between overlay and Markdown, re-rendering from the stored segments."""
        self.overlay = overlay
        self._answer.show_rejected = show_rejected
        self._answer.display = overlay
        self._markdown.display = not overlay
        if overlay:
            await self._stop_stream()
            self._answer.redraw()
        else:
            await self._stop_stream()
            self._md_len = len(self.message.content)
            await self._markdown.update(self.message.content)
        self._update_meta()

    async def refresh_answer(self) -> None:
        if self.overlay:
            self._answer.redraw()
            return
        content = self.message.content
        if len(content) > self._md_len:
            if self._md_stream is None:
                self._md_stream = Markdown.get_stream(self._markdown)
            await self._md_stream.write(content[self._md_len:])
            self._md_len = len(content)

    async def finish(self) -> None:
        """The turn ended: final text, and the stats line."""
        self.streaming = False
        await self.refresh_answer()
        await self._stop_stream()
        if not self.overlay and self._markdown.source != self.message.content:
            self._md_len = len(self.message.content)
            await self._markdown.update(self.message.content)
        self._update_meta()

    async def _stop_stream(self) -> None:
        if self._md_stream is not None:
            await self._md_stream.stop()
            self._md_stream = None

    def _update_meta(self) -> None:
        self._meta.update(meta_line(self.message, self.streaming))


def meta_line(m: Message, streaming: bool) -> Content:
    """The small line under an answer: configuration, size, acceptance, speed, state."""
    parts: list[Content | str] = [m.config] if m.config else []
    s = m.stats
    if streaming:
        parts.append(Content.styled("generating…", "$accent"))
    elif s:
        parts.append(f"{s.get('n_generated', 0)} tokens")
        if s.get("acceptance_rate") is not None:
            parts.append(f"{s['acceptance_rate']:.0%} accepted")
        if s.get("tok_per_s") is not None:
            parts.append(f"{s['tok_per_s']:.1f} tok/s")
    if m.stopped and not streaming:
        reason = s.get("stop_reason") if s else None
        parts.append(Content.styled("stopped" + (f" ({reason})" if reason and reason != "cancelled" else ""), "$warning"))
    return Content(" · ").join(parts)

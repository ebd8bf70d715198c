"""The token inspector's panel: the answer's rejection summary and the facts of the token
under the cursor (spectui/chat/inspector.py), which it highlights in the transcript. It takes
the keys while open: ←/→ token, ↑/↓ rejected draft, page up/down answer, esc leaves."""

from __future__ import annotations

from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from spectui.chat.inspector import Cursor, facts, summary_line
from spectui.tui.widgets.message import AssistantMessage


class InspectorPanel(Static, can_focus=True):
    DEFAULT_CSS = """
    InspectorPanel {
        display: none;
        height: auto;
        max-height: 70%;  /* the transcript keeps the rest: the highlighted line scrolls into it */
        padding: 0 1;
        border: round $accent;
        border-title-color: $accent;
        border-subtitle-color: $text-muted;
        background: $panel;
    }
    InspectorPanel.-open {
        display: block;
    }
    """
    BINDINGS = [
        Binding("left", "move(-1)", "token", key_display="←"),
        Binding("right", "move(1)", "token", key_display="→"),
        Binding("up", "jump(-1)", "rejected", key_display="↑"),
        Binding("down", "jump(1)", "rejected", key_display="↓"),
        Binding("home", "move(-1_000_000)", "first", show=False),
        Binding("end", "move(1_000_000)", "last", show=False),
        Binding("pageup", "other(-1)", "answer", key_display="pgup"),
        Binding("pagedown", "other(1)", "answer", key_display="pgdn"),
        Binding("escape", "close", "leave"),
    ]

    class OtherAnswer(Message):
        """Page up / page down: the screen opens the answer before or after this one."""

        def __init__(self, answer: AssistantMessage | None, step: int):
            super().__init__()
            self.answer, self.step = answer, step

    def __init__(self) -> None:
        super().__init__(id="inspector")
        self.cursor: Cursor | None = None
        self.answer: AssistantMessage | None = None
        self._before: Widget | None = None  # focused before the panel took the keys, and again after
        self._hint = ""  # how to record the data, shown when the answer has none
        self.border_title = "inspect"
        self.border_subtitle = "←/→ token · ↑/↓ rejected · pgup/pgdn answer · esc leaves"

    @property
    def is_open(self) -> bool:
        return self.cursor is not None

    def open(self, cursor: Cursor, answer: AssistantMessage, hint: str = "") -> None:
        """Put the cursor on `answer`, whose message the cursor's rounds built; `hint`: how to
        record what the answer lacks, when it was given without inspect."""
        if self.answer is not None and self.answer is not answer:
            self.answer.mark(None)
        self.cursor, self.answer, self._hint = cursor, answer, hint
        if self.screen.focused is not self:
            self._before = self.screen.focused
        self.add_class("-open")
        self.focus()
        self._show()

    def close(self) -> None:
        """Leave: no highlight, no panel, the focus where it was."""
        if self.answer is not None and self.answer.is_attached:
            self.answer.mark(None)
        self.cursor = self.answer = None
        self.remove_class("-open")
        self.screen.set_focus(self._before if self._before is not None and self._before.is_attached else None)

    def on_resize(self) -> None:
        """Opened (or grown): the transcript lost lines, keep the token in what it shows."""
        if self.answer is not None and self.answer.is_attached:
            self.answer.show_mark()

    def action_move(self, n: int) -> None:
        if self.cursor is not None and self.cursor.move(n):
            self._show()

    def action_jump(self, direction: int) -> None:
        if self.cursor is None:
            return
        if self.cursor.jump_rejected(direction):
            self._show()
        else:
            self.notify(f"No rejected draft {'after' if direction > 0 else 'before'} this token.", timeout=2)

    def action_other(self, step: int) -> None:
        self.post_message(self.OtherAnswer(self.answer, step))

    def action_close(self) -> None:
        self.close()

    def _show(self) -> None:
        cursor = self.cursor
        if cursor is None:
            return
        if self.answer is not None and not self.answer.is_attached:  # a new chat, an edit or a regenerate took it
            self.close()
            self.notify("That answer is no longer on screen: f7 inspects the last one.", timeout=3)
            return
        lines = [Content.styled(summary_line(cursor.rounds), "$text-muted")]
        if not cursor.inspected and self._hint:
            lines.append(Content.styled(self._hint, "$warning"))
        lines += [Content.styled(line, "bold") if i == 0 else Content(line) for i, line in enumerate(facts(cursor))]
        self.update(Content("\n").join(lines))
        stop = cursor.stop
        if self.answer is not None:
            self.answer.mark((stop.start, stop.end) if stop else None)
            self.call_after_refresh(self.answer.show_mark)  # after this panel's own layout, when it opens

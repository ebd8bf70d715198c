"""Markdown in the overlay view: headings, list items, code fences and inline code are
rendered line by line on top of the token colours, so both show at once. And the Markdown
view's parser and text: an answer's line breaks are kept, and unfenced indented code is
shown as code (a chat answer is plain text as often as it is Markdown).

Character for character: a marker is restyled or swapped for one glyph of the same width
(`-` becomes `•`, a fence's backticks a rule), never removed, so offsets into the shown
text stay offsets into the answer (a selection copies the answer's own Markdown).
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from textual.content import Content, Span
from textual.widgets import Markdown

from spectui.engine.overlay import REJECTED
from spectui.store.chat_types import FENCE
from spectui.tui.widgets.overlay import shown_content, visible

HEADING = re.compile(r" {0,3}(#{1,6})\s")
BULLET = re.compile(r"\s*([-*+])\s")
NUMBERED = re.compile(r"\s*(\d{1,9}[.)])\s")
INLINE = re.compile(r"(`)[^`\n]+(`)|(\*\*)[^*\n]+(\*\*)")
MARK = "$text-muted"
CODE = "on $boost"
HEADING_STYLE = {1: "bold underline", 2: "bold"}  # deeper levels: bold italic
MARKED = "reverse"  # the token under the inspector's cursor
INDENTED = re.compile(r"(?: {2,}|\t)\S")
BLOCK_START = re.compile(r" {0,3}(?:#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|>|\|)")  # Markdown's own structure


class AnswerMarkdown(Markdown):
    """An answer in the Markdown view: streamed as it comes, then shown whole, its line breaks
    kept and its unfenced code fenced."""

    def __init__(self, classes: str):
        super().__init__(classes=classes, parser_factory=markdown_parser)

    async def show_whole(self, text: str) -> None:
        await self.update(fence_indented_code(text))


def markdown_parser() -> MarkdownIt:
    """Textual's gfm-like parser, with every line break of a paragraph kept: a poem's or an
    address's lines stay lines (Textual joins soft breaks with a space)."""
    parser = MarkdownIt("gfm-like")
    parser.core.ruler.push("hard_breaks", _hard_breaks)
    return parser


def _hard_breaks(state: StateCore) -> None:
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"


def fence_indented_code(text: str) -> str:
    """`text` with unfenced code fenced, so its indentation shows: in a paragraph whose later
    lines are indented ("def f(s):\n    return s"), from the line before the first indented
    one to the paragraph's end. Lists, headings, quotes and tables are left to Markdown."""
    out: list[str] = []
    block: list[str] = []
    in_fence = False

    def flush() -> None:
        first = next((i for i, line in enumerate(block) if i and INDENTED.match(line)), None)
        if first is None or any(BLOCK_START.match(line) for line in block):
            out.extend(block)
        else:
            out.extend([*block[: first - 1], "```", *block[first - 1 :], "```"])
        block.clear()

    for line in text.split("\n"):
        if in_fence or FENCE.match(line) or not line.strip():
            flush()
            in_fence ^= bool(FENCE.match(line))
            out.append(line)
        else:
            block.append(line)
    flush()
    return "\n".join(out)


def ends_in_code(text: str) -> bool:
    """Whether Markdown `text` ends inside a fenced code block (an odd number of fences)."""
    return sum(1 for line in text.split("\n") if FENCE.match(line)) % 2 == 1


def last_code_block(text: str) -> str | None:
    """The body of the last fenced code block (an unclosed one runs to the end), or None."""
    blocks: list[list[str]] = []
    body: list[str] | None = None
    for line in text.split("\n"):
        if FENCE.match(line):
            if body is None:
                body = []
            else:
                blocks.append(body)
                body = None
        elif body is not None:
            body.append(line)
    if body:
        blocks.append(body)
    return "\n".join(blocks[-1]) if blocks else None


def render_markdown(
    segments, show_rejected: bool = True, in_code: bool = False, mark: tuple[int, int] | None = None
) -> Content:
    """The overlay of `segments` with the answer's Markdown blocks rendered; `in_code`: it
    starts inside a code block opened earlier in the answer. Blocks are found in the
    answer's own text (a rejected draft before a fence does not hide the fence) and drawn
    where that text is shown. `mark`: characters [start, end) of the segments' text to
    highlight (the inspector's token)."""
    shown_pieces = visible(segments, show_rejected)  # once per redraw: the streaming hot path
    content = shown_content(shown_pieces)
    where: list[int] = []  # the shown position of each character of the answer
    pos = 0
    for text, kind in shown_pieces:
        if kind != REJECTED:
            where.extend(range(pos, pos + len(text)))
        pos += len(text)
    answer = "".join(t for t, k in segments if k != REJECTED)
    swaps: dict[int, str] = {}  # answer position -> the glyph shown instead
    spans: list[Span] = []
    start = 0
    for line in answer.split("\n"):
        end = start + len(line)
        fence = FENCE.match(line)
        if fence:
            rest = line[fence.start(1) :]
            run = len(rest) - len(rest.lstrip(rest[0]))
            swaps.update({start + fence.start(1) + i: ("╰" if in_code else "╭") if i == 0 else "─" for i in range(run)})
            spans.append(Span(start, end, MARK))
            in_code = not in_code
        elif in_code:
            spans.append(Span(start, end, CODE))
        else:
            spans += _line_spans(line, start, swaps)
        start = end + 1
    chars = list(content.plain)
    for i, glyph in swaps.items():
        chars[where[i]] = glyph
    shown = [Span(where[s.start], where[s.end - 1] + 1, s.style) for s in spans if s.end > s.start]
    marked = _marked(segments, shown_pieces, where, *mark) if mark else []
    return Content("".join(chars), spans=list(content.spans) + shown + marked)


def _marked(segments, shown_pieces, where: list[int], start: int, end: int) -> list[Span]:
    """Where characters [start, end) of the segments are shown: the answer's own through
    `where`, a rejected draft as the whole mark `visible` made of it (none when hidden)."""
    marks, pos = [], 0
    for text, kind in shown_pieces:
        if kind == REJECTED:
            marks.append((pos, pos + len(text)))
        pos += len(text)
    cells: list[int] = []
    spans, seg_pos, answer_pos, n_rejected = [], 0, 0, 0
    for text, kind in segments:
        lo, hi = max(start, seg_pos), min(end, seg_pos + len(text))
        if kind != REJECTED:
            cells += [where[answer_pos + i - seg_pos] for i in range(lo, hi)]
            answer_pos += len(text)
        elif text:
            if lo < hi and n_rejected < len(marks):
                spans.append(Span(*marks[n_rejected], MARKED))
            n_rejected += 1
        seg_pos += len(text)
    runs: list[list[int]] = []  # adjacent cells, one span each
    for cell in cells:
        if runs and cell == runs[-1][1]:
            runs[-1][1] = cell + 1
        else:
            runs.append([cell, cell + 1])
    return spans + [Span(a, b, MARKED) for a, b in runs]


def _line_spans(line: str, pos: int, swaps: dict[int, str]) -> list[Span]:
    """A line outside code: heading, list marker, inline code and bold."""
    spans = []
    if m := HEADING.match(line):
        level = len(m.group(1))
        spans += [
            Span(pos + m.start(1), pos + m.end(1), MARK),
            Span(pos + m.end(), pos + len(line), HEADING_STYLE.get(level, "bold italic")),
        ]
    elif m := BULLET.match(line):
        swaps[pos + m.start(1)] = "•"
        spans.append(Span(pos + m.start(1), pos + m.end(1), MARK))
    elif m := NUMBERED.match(line):
        spans.append(Span(pos + m.start(1), pos + m.end(1), MARK))
    for m in INLINE.finditer(line):
        a, b = pos + m.start(), pos + m.end()
        if m.group(1):  # `code`
            spans += [Span(a, a + 1, MARK), Span(a + 1, b - 1, CODE), Span(b - 1, b, MARK)]
        else:  # **bold**
            spans += [Span(a, a + 2, MARK), Span(a + 2, b - 2, "bold"), Span(b - 2, b, MARK)]
    return spans

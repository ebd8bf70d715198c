"""Rejected text never moves the answer's own text: in the overlay, a rejected draft is a
short run inside a line (its newlines and tabs as marks, a long one collapsed), a rejected
draft that would start a line ends the line before, and Markdown comes from the answer alone.
Checked on any segments (hypothesis) and on a recorded trace whose rejected drafts hold
newlines inside code, lists and headings."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from spectui.engine.events import Round
from spectui.engine.overlay import COLLAPSE_CHARS, REJECTED, add_segments, segments, shown_rejected
from spectui.trace.format import read
from spectui.tui.widgets.markdown import render_markdown
from spectui.tui.widgets.overlay import STYLES, legend_lines, visible

TRACE = Path(__file__).parents[1] / "data" / "rejected_newlines.jsonl"
SWAPS = set("╭╰─•")  # glyphs Markdown markers are drawn with, one for one


def answer_of(segs) -> str:
    return "".join(t for t, k in segs if k != REJECTED)


def without_rejected(content) -> str:
    """The shown text with every rejected character deleted (by its style)."""
    rejected = [False] * len(content.plain)
    for span in content.spans:
        if str(span.style) == STYLES[REJECTED]:
            rejected[span.start : span.end] = [True] * (span.end - span.start)
    return "".join(c for c, r in zip(content.plain, rejected) if not r)


def reads_as(shown: str, answer: str) -> bool:
    """Character for character, where only Markdown markers may be drawn as other glyphs."""
    return len(shown) == len(answer) and all(a == b or a in SWAPS for a, b in zip(shown, answer))


text = st.text(alphabet="ab #-1.`\n\t", min_size=1, max_size=30)
kinds = st.sampled_from(["draft", "ngram", "target", REJECTED])


@given(st.lists(st.tuples(text, kinds), max_size=12))
def test_deleting_the_rejected_text_leaves_the_answer_line_for_line(pieces):
    segs: list[tuple[str, str]] = []
    add_segments(segs, pieces)
    answer = answer_of(segs)
    shown = visible(segs, True)
    assert answer_of(shown) == answer
    rejected = [t for t, k in shown if k == REJECTED]
    assert all("\n" not in t and "\t" not in t and len(t) <= COLLAPSE_CHARS for t in rejected)
    # a line that holds answer text starts with it: indentation, a list number, a fence stay put
    kinds = [k == REJECTED for t, k in shown for _ in t]
    text = "".join(t for t, _ in shown)
    start = 0
    for line in text.split("\n"):
        rejected = kinds[start : start + len(line)]
        assert all(rejected) or not rejected or not rejected[0], (line, shown)
        start += len(line) + 1
    assert reads_as(without_rejected(render_markdown(segs)), answer)
    assert reads_as(render_markdown(segs, show_rejected=False).plain, answer)


def test_marks_and_the_collapse():
    assert shown_rejected("a\n\tb") == "a↵→b"
    assert shown_rejected("x" * 243) == "✗²⁴³"  # never read as the answer's own digits
    segs = [("three\n", "draft"), ("1. App", REJECTED), ("1. Bananas", "target")]
    assert render_markdown(segs).plain.split("\n") == ["three1. App", "1. Bananas"]


def test_a_rejected_draft_at_an_answers_start_ends_its_first_line_never_a_line_of_its_own():
    """Not before the first fence's frame, nor on a line the answer does not have."""
    segs = [("x" * 21, REJECTED), ("```python\nprint(1)\n```", "target")]
    shown = render_markdown(segs)
    assert shown.plain.split("\n") == ["╭──python✗²¹", "print(1)", "╰──"]
    assert without_rejected(shown) == "╭──python\nprint(1)\n╰──"
    segs = [("- Lists are", REJECTED), ("Certainly", "target"), ("! Here", REJECTED)]
    assert render_markdown(segs).plain == "Certainly- Lists are! Here"  # streaming: the first line so far
    segs += [("!\n", "target"), ("Next", "draft")]
    assert render_markdown(segs).plain.split("\n") == ["Certainly- Lists are! Here!", "Next"]


def test_the_legend_explains_a_struck_through_fence():
    """A rejected ``` is rejected text like any other (Markdown is drawn from the answer alone)."""
    segs = [("Done:\n", "target"), ("```", REJECTED), ("all", "target")]
    assert render_markdown(segs).plain == "Done:```\nall"
    [line] = [line for line in legend_lines() if line.plain.startswith("```")]
    assert line.plain == "``` rejected Markdown, as text" and str(line.spans[0].style) == STYLES[REJECTED]


def test_a_recorded_answer_reads_as_itself_with_its_rejected_newlines():
    """Qwen's code, list and heading answers where rejected drafts held newlines."""
    [turn] = read(TRACE).turns
    segs: list[tuple[str, str]] = []
    for r in turn.events:
        if isinstance(r, Round):
            add_segments(segs, segments(r))
    assert any("\n" in t for t, k in segs if k == REJECTED), "the recording must hold rejected newlines"
    answer = answer_of(segs)
    assert "```" in answer and "\n# " in "\n" + answer and "\n1. " in "\n" + answer
    shown = render_markdown(segs)
    assert reads_as(without_rejected(shown), answer)
    assert segs[0][1] == REJECTED  # the answer starts with a rejected draft: at its first line's end
    lines = shown.plain.split("\n")
    assert lines[0].startswith("╭──") and lines[0].endswith(shown_rejected(segs[0][0]))  # the frame stays put
    assert len(lines) == len(answer.split("\n"))  # no line broken, none added

"""Measured figures live only in docs/performance.md, each with its date, machine and command:
a figure copied into another page goes stale there unseen. Other pages point to it.

A measured figure, narrowly (so a flag's default or a threshold never counts): a number with a
decimal point followed by a unit of time, speed or ratio ("0.14 ms", "1.3–1.6 s", "2.05x",
"×1.22", "0.2–19%"), or any number of tok/s. Code spans and fenced blocks are not prose: they
show a format or a command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted(p for p in (REPO / "docs").glob("*.md") if p.name != "performance.md")]
NUMBER = r"(?<![\w.])\d+(?:\.\d+)?(?:\s?[–-]\s?\d+(?:\.\d+)?)?"
FIGURE = re.compile(
    rf"{NUMBER}\s?(?:ms|µs|s|seconds|%)(?![\w/])"  # a time or a share
    rf"|{NUMBER}x(?![\w])"  # a ratio, "2.05x"
    r"|×\s?\d+\.\d+"  # a ratio, "×1.22"
    rf"|{NUMBER}\s?tok/s"  # a speed
)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SPAN = re.compile(r"`[^`\n]*`")


def figures(text: str) -> list[str]:
    """The measured figures in a page's prose (the rule above)."""
    prose = SPAN.sub("", FENCE.sub("", text))
    found = [m.group(0) for m in FIGURE.finditer(prose)]
    return [f for f in found if "." in f or f.endswith("tok/s")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_but_performance_md_carries_a_measured_figure(page):
    assert figures(page.read_text(encoding="utf-8")) == [], f"move these to docs/performance.md: {page.name}"


@pytest.mark.parametrize(
    "text, found",
    [
        ("measured on SmolLM2, 0.14 ms a round", ["0.14 ms"]),
        ("1.3–1.6 s for its three drafts", ["1.3–1.6 s"]),
        ("| 1.06x / 1.02x | 0.2–19% |", ["1.06x", "1.02x", "0.2–19%"]),
        ("the panel showed ×1.22 and 33 tok/s", ["×1.22", "33 tok/s"]),
        ("--spec-draft-n-max 3, -c 4096, temperature 0.8, p-min 0.75", []),
        ("repeats within 5%, a drift over 15%, busy_timeout 5 s, every 50 ms", []),
        ("llama-cpp-python 0.3.36; the strip `acc 67% ×1.22`", []),
        ("```\nspectui bench -n 0.5s\n```\nprose", []),
    ],
)
def test_the_rule_finds_figures_and_not_defaults_or_thresholds(text, found):
    assert figures(text) == found

"""The README's keys table against the command table, and its flags table against cog's output
of the option records, so a key or a flag cannot change without its line changing."""

from __future__ import annotations

import re
from pathlib import Path

from cogapp import Cog

from spectui.tui.commands import COMMANDS, OTHER_KEYS, key_display

README_PATH = Path(__file__).parent.parent / "README.md"
README = README_PATH.read_text(encoding="utf-8")


def section(title: str) -> str:
    """The README's text under `## title`, up to the next heading of that level."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.S | re.M)
    assert match, f"README has no '## {title}' section"
    return match.group(1)


def table_rows(text: str) -> list[list[str]]:
    """The cells of a Markdown table's body rows (`\\|` inside a cell is a literal bar)."""
    rows = [line for line in text.splitlines() if line.startswith("|")][2:]
    return [[cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def readme_keys() -> list[str]:
    keys = []
    for cells in table_rows(section("Keys")):
        keys += [k.strip() for k in re.split(r" / | or ", cells[0])]
    return keys


def test_keys_table_lists_every_bound_key_and_no_other():
    bound = [key_display(k) for c in COMMANDS if c.keys for k in c.keys.split(",")]
    bound += [key_display(k) for k, _title, _help in OTHER_KEYS]
    listed = readme_keys()
    assert len(listed) == len(set(listed)), "a key is listed twice in the README's keys table"
    assert sorted(listed) == sorted(bound)


def test_palette_only_commands_are_named():
    text = section("Keys").split("Only in the palette", 1)[1]
    for c in COMMANDS:
        if not c.keys:
            assert c.title.removesuffix(" on/off") in text.replace("\n", " "), c.title


def test_the_flags_table_is_cogs_output_of_the_option_records():
    """The flags table is generated (spectui/cli/flags_table.py): after changing an option,
    `cog -r README.md` writes it again, and this fails until then."""
    assert Cog().main(["cog", "--check", str(README_PATH)]) == 0


def test_the_readme_stays_a_guide_of_at_most_250_lines():
    """Design, storage internals and figures live in docs/; the README is what a user reads first."""
    assert len(README.splitlines()) <= 250

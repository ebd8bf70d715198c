"""The README's keys and flags tables against their sources (the command table, the Setup
options and the parsers), so a key or a flag cannot change without its line changing."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from spectui.cli.main import build_parser
from spectui.config.setup import OPTIONS, Setup
from spectui.tui.commands import COMMANDS, OTHER_KEYS, key_display

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
SHARED_BY = ("chat", "run", "bench")  # the README: "chat, run and bench share these flags"
NO_VALUE = {"", "none", "random", "the physical cores", "the preset's"}  # how the README says "unset"


def section(title: str) -> str:
    """The README's text under `## title`, up to the next heading of that level."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.S | re.M)
    assert match, f"README has no '## {title}' section"
    return match.group(1)


def table_rows(text: str) -> list[list[str]]:
    """The cells of a Markdown table's body rows (`\\|` inside a cell is a literal bar)."""
    rows = [line for line in text.splitlines() if line.startswith("|")][2:]
    return [[cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


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


def flags_table() -> list[tuple[str, str]]:
    """(flag, its default as the README writes it), one per flag of the flags table."""
    out = []
    for flag_cell, default_cell, _meaning in table_rows(section("Flags and defaults")):
        flags = [span.split()[0] for span in re.findall(r"`([^`]+)`", flag_cell)]
        defaults = [d.strip().strip("`") for d in default_cell.split(" / ")]
        if len(defaults) == 1:
            defaults *= len(flags)
        assert len(defaults) == len(flags), f"README flags row {flag_cell}: one default per flag"
        out += zip(flags, defaults)
    return out


def option_of(flag: str) -> str | None:
    return next((name for name, o in OPTIONS.items() if flag in o.flags), None)


def ngram_flags() -> list[tuple[str, str]]:
    """(flag, default) from the paragraph after the table: "`--spec-ngram-x-size-n` / `-size-m`
    (12 / 48)", "... and the same for `map-k4v` (...)"."""
    text = section("Flags and defaults").split("The n-gram types draft up to", 1)[1].split(":", 1)[1]
    parts = re.split(r"\(([\d /]+)\)", text)
    out = []
    for chunk, defaults in zip(parts[::2], parts[1::2]):
        names = re.findall(r"`([^`]+)`", chunk)
        flags, variants = [names[0]], []
        for name in names[1:]:
            if name.startswith("-"):  # a suffix: the first flag's stem, then these segments
                flags.append(names[0].rsplit("-", name.count("-"))[0] + name)
            else:  # "the same for `map-k4v`": the same flags for that type
                variants.append(name)
        base = re.match(r"--spec-ngram-(.+?)-(?:size|n-match|min-hits)", names[0])
        assert base, names[0]
        for variant in variants:
            flags += [f.replace(f"-{base.group(1)}-", f"-{variant}-") for f in flags[: len(defaults.split(" / "))]]
        values = defaults.split(" / ")
        out += [(f, values[i % len(values)]) for i, f in enumerate(flags)]
    return out


def test_flags_table_and_ngram_paragraph_cover_every_option():
    named = {option_of(f) for f, _ in flags_table() + ngram_flags()}
    assert set(OPTIONS) - named == set(), "options the README does not name"


@pytest.mark.parametrize("flag,default", flags_table() + ngram_flags())
def test_flag_default_matches_setup(flag, default):
    value = default.split(" (")[0].strip()
    name = option_of(flag)
    if name is None:  # --preset and the diagnostics: not a Setup option
        expected = Setup().preset if flag == "--preset" else None
    else:
        expected = Setup().values()[name]
    if expected is None:
        assert value in NO_VALUE, f"{flag}: README says {value!r}, the default is unset"
    else:
        assert value == str(expected), f"{flag}: README says {value!r}, the code {expected!r}"


def test_every_flag_is_accepted_by_chat_run_and_bench():
    parsers = subparsers()
    for flag, _ in flags_table() + ngram_flags():
        for command in SHARED_BY:
            assert flag in parsers[command]._option_string_actions, f"spectui {command} has no {flag}"


def test_bench_defaults_are_its_own():
    bench = subparsers()["bench"]
    for flag_cell, default_cell, _ in table_rows(section("Flags and defaults")):
        match = re.search(r"the bench: ([^)]+)\)", default_cell)
        if match:
            flag = re.findall(r"`([^`]+)`", flag_cell)[0].split()[0]
            help_text = bench._option_string_actions[flag].help or ""
            assert f"default {match.group(1)}" in help_text, (flag, help_text)


def test_the_readme_stays_a_guide_of_at_most_250_lines():
    """Design, storage internals and figures live in docs/; the README is what a user reads first."""
    assert len(README.splitlines()) <= 250

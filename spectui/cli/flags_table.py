"""The README's "Flags and defaults" table, made from the option records and the shared flags'
parser (cog writes it into README.md; tests/test_docs.py checks that it is up to date):
`cog -r README.md` after changing an option.
"""

from __future__ import annotations

import argparse
import re

from spectui.cli.bench import OWN_DEFAULTS
from spectui.cli.setup_flags import LONG_CHOICES, add_setup_flags
from spectui.config import describe, presets
from spectui.config.setup import OPTIONS

# options that share a row, as a reader compares them; every other flag has a row of its own
ROWS = (
    ("model", "model_draft"),
    ("n_gpu_layers", "n_gpu_layers_draft"),
    ("ctx_size", "batch_size", "threads"),
    ("cache_type_k_draft", "cache_type_v_draft"),
    ("spec_draft_n_min", "spec_draft_p_min"),
    ("spec_ngram_simple_size_n", "spec_ngram_simple_size_m"),
    ("spec_ngram_map_k_size_n", "spec_ngram_map_k_size_m", "spec_ngram_map_k_min_hits"),
    ("spec_ngram_map_k4v_size_n", "spec_ngram_map_k4v_size_m", "spec_ngram_map_k4v_min_hits"),
    ("spec_ngram_mod_n_match", "spec_ngram_mod_n_min", "spec_ngram_mod_n_max"),
    ("top_k", "top_p", "min_p"),
    ("verbose", "log_file"),
)
_AROUND_DEFAULT = re.compile(r"\s*\(([^()]*\{default\}[^()]*)\)")  # the help's "(default {default}; ...)"
_SAID_DEFAULT = re.compile(r"\s*\(default: ([^()]*)\)")  # a default in words: "(default: the physical cores)"


def _cells(action: argparse.Action) -> tuple[str, str, str]:
    """A flag's cells: the flag (with its choices where short), its default, its meaning."""
    flag = f"`{action.option_strings[0]}`"
    if isinstance(action, argparse.BooleanOptionalAction):  # a switch: its off flag beside it
        flag += f", `{action.option_strings[-1]}`"
    if action.choices and len(",".join(map(str, action.choices))) <= LONG_CHOICES:
        flag = f"`{action.option_strings[0]} {'|'.join(map(str, action.choices))}`"
    o = OPTIONS.get(action.dest)
    if action.dest == "preset":
        return flag, "`default`", action.help or ""
    if o is None:  # --spec-default and the diagnostics
        return flag, "" if action.default in (None, False) else str(action.default), action.help or ""
    if said := _SAID_DEFAULT.search(o.help):
        return flag, said.group(1), _SAID_DEFAULT.sub("", o.help)
    found = _AROUND_DEFAULT.search(o.help)
    if found:
        default = found.group(1).replace("{default}", o.shown_default).removeprefix("default ")
    else:
        default = describe.value_words(o.name, o.default) if o.default is None else o.shown_default
    if o.name in OWN_DEFAULTS:
        default += f" (the bench: {OWN_DEFAULTS[o.name]:g})"
    chosen = presets.shipped_defaults().get(o.name)
    if o.owned and o.default is None and chosen is not None:
        default = "the preset's"  # a model: the default preset names the embedded pair
    elif o.owned and chosen is not None and str(chosen) != o.shown_default:
        default += f" (the default preset: {chosen})"
    return flag, default, _AROUND_DEFAULT.sub("", o.help)


def markdown() -> str:
    """The table, a row per flag of chat, run and bench, or per ROWS group of them."""
    p = argparse.ArgumentParser(add_help=False)
    add_setup_flags(p)
    actions = {a.dest: a for group in p._action_groups for a in group._group_actions}  # in --help's order
    grouped = {name: row for row in ROWS for name in row}
    lines = ["| flag | default | meaning |", "|---|---|---|"]
    for dest in actions:
        row = grouped.get(dest, (dest,))
        if dest != row[0]:
            continue
        flags, defaults, meanings = zip(*(_cells(actions[name]) for name in row), strict=True)
        shown = (defaults[0],) if len(set(defaults)) == 1 else defaults
        cells = (" / ".join(flags), " / ".join(shown), " / ".join(meanings))
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"

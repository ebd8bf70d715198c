"""Themes: the theme files read and checked as plain data (tui/ makes Textual themes of them),
with the overlay colours as theme variables.

Each file holds one theme: the Textual Theme fields (name, primary, ..., dark) and a
`[variables]` table with `spec-draft`, `spec-ngram`, `spec-target`, `spec-resampled`,
`spec-rejected` (one per overlay kind, usable in CSS as `$spec-draft`) plus any Textual
variables. Shipped themes come from the top-level themes/ folder (package data
`spectui.shipped_themes`); user themes from `paths.user_themes_dir()` override them by
name. A broken file is skipped with a message naming it, so one typo never keeps the
app from starting.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from spectui.bounded import CONFIG_BYTES, loads_toml
from spectui.config.paths import shipped_dir, user_themes_dir
from spectui.config.text import read_text
from spectui.engine.overlay import KINDS
from spectui.errors import UserError

OVERLAY_VARIABLES = tuple(f"spec-{kind}" for kind in KINDS)
COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
VALID_KEYS = ("name", *COLOR_KEYS, "dark", "variables")
# (is it a colour, a colour name near it or None): the UI owns the colour syntax
ColorCheck = Callable[[str], tuple[bool, str | None]]


@dataclass
class ThemeFile:
    """One theme as its file gives it: every colour already checked."""

    name: str
    colors: dict[str, str]  # primary always, then any other of COLOR_KEYS
    dark: bool
    variables: dict[str, str]


def overlay_variable(kind: str) -> str:
    """The theme variable holding the colour of an overlay kind ("draft" -> "spec-draft")."""
    if kind not in KINDS:
        raise ValueError(f"unknown overlay kind {kind!r}; kinds: {', '.join(KINDS)}")
    return f"spec-{kind}"


class _BadTheme(Exception):
    """A theme file's problem; read_themes turns it into a message and skips the file."""


def _color(where: str, value, check: ColorCheck) -> str:
    if not isinstance(value, str):
        raise _BadTheme(f'{where} must be a colour string like "#1e90ff", got {value!r}')
    is_color, suggested = check(value)
    if not is_color:
        hint = f"; did you mean {suggested!r}?" if suggested else ""
        raise _BadTheme(
            f"{where}: {value!r} is not a colour (use #RRGGBB, rgb(r,g,b), hsl(h,s,l) or a colour name){hint}"
        )
    return value


def _parse(text: str, stem: str, check: ColorCheck) -> ThemeFile:
    """One file's theme; raise _BadTheme with the first problem."""
    try:
        data = loads_toml(text)
    except tomllib.TOMLDecodeError as e:
        raise _BadTheme(f"TOML syntax error: {e}") from e
    for key in data:
        if key not in VALID_KEYS:
            raise _BadTheme(f"unknown key '{key}'; valid keys: {', '.join(VALID_KEYS)}")
    name = data.get("name", stem)
    if not isinstance(name, str) or not name:
        raise _BadTheme(f"key 'name' must be a non-empty string, got {name!r}")
    if "primary" not in data:
        raise _BadTheme("missing key 'primary' (every theme needs a primary colour)")
    colors = {k: _color(f"key '{k}'", data[k], check) for k in COLOR_KEYS if k in data}
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise _BadTheme(f"key 'dark' must be true or false, got {dark!r}")
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise _BadTheme("'variables' must be a table: put [variables] on its own line")
    for key, value in variables.items():
        if key.startswith("spec-") and key not in OVERLAY_VARIABLES:
            raise _BadTheme(f"unknown overlay variable '{key}'; overlay variables: {', '.join(OVERLAY_VARIABLES)}")
        if key in OVERLAY_VARIABLES:
            _color(f"variable '{key}'", value, check)
        elif not isinstance(value, str):
            raise _BadTheme(f"variable '{key}' must be a string, got {value!r}")
    return ThemeFile(name, colors, dark, dict(variables))


def _read(f) -> str:
    """A theme file's text (a shipped one is a Traversable; in a wheel, a file on disk too)."""
    return read_text(Path(str(f)), "theme", CONFIG_BYTES)


def _load_dir(files, problems: list[str], check: ColorCheck) -> dict[str, ThemeFile]:
    """name -> theme for the .toml files in `files` (sorted); problems get one line per bad file."""
    found: dict[str, ThemeFile] = {}
    for f in sorted((f for f in files if f.name.endswith(".toml")), key=lambda f: f.name):
        try:
            theme = _parse(_read(f), Path(f.name).stem, check)
        except _BadTheme as e:
            problems.append(f"theme {f}: {e}; theme skipped")
            continue
        except UserError as e:
            problems.append(f"{e}; theme skipped")
            continue
        found[theme.name] = theme
    return found


def read_themes(check: ColorCheck) -> tuple[list[ThemeFile], list[str]]:
    """Shipped themes, then user themes (a user theme replaces a shipped one of the same
    name, in place), and one message per skipped file. Never raises.

    A user theme that leaves out overlay variables gets them from spectui-dark or
    spectui-light (by its `dark`), so `$spec-*` always resolves in CSS.
    """
    problems: list[str] = []
    themes = _load_dir(shipped_dir("themes").iterdir(), problems, check)
    defaults = {
        dark: themes[name].variables
        for dark, name in ((True, "spectui-dark"), (False, "spectui-light"))
        if name in themes
    }
    d = user_themes_dir()
    for name, theme in (_load_dir(d.iterdir(), problems, check) if d.is_dir() else {}).items():
        fallback = defaults.get(theme.dark, {})
        for var in OVERLAY_VARIABLES:
            if var not in theme.variables and var in fallback:
                theme.variables[var] = fallback[var]
        themes[name] = theme
    return list(themes.values()), problems

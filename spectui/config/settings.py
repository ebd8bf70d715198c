"""Persisted UI settings (theme, overlay, rejected tokens, stats panel and strip, trace recording) in
`paths.settings_path()`.

Settings are a convenience: a broken or hand-edited file must never stop the app, so
loading falls back to defaults (per key where it can) and returns a message to show.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import tomli_w

from spectui.bounded import CONFIG_BYTES, loads_toml
from spectui.config.paths import settings_path, write_atomic
from spectui.config.text import read_text
from spectui.errors import UserError


@dataclass(slots=True)
class Settings:
    """The app's remembered choices; the file's keys are the field names, in this order."""

    theme: str = "spectui-dark"
    """a theme name; the app falls back to the default if it is gone"""
    show_overlay: bool = True
    """colour tokens by where they came from"""
    show_rejected: bool = True
    """show rejected draft tokens (struck through)"""
    show_panel: bool = True
    """the stats panel (100 columns and wider)"""
    record_traces: bool = False
    """append every chat's turns to a trace in the data dir (spectui replay)"""
    show_strip: bool = True
    """the stats panel's one-line form, below 100 columns (apart: hiding it hides no panel)"""


def panel_setting(narrow: bool) -> str:
    """What ctrl+b turns on or off: the one-line strip on a narrow terminal, the panel on a
    wide one, each remembered apart, so that a choice made at one width never hides the
    other unseen at the next start."""
    return "show_strip" if narrow else "show_panel"


DEFAULTS = {f.name: f.default for f in fields(Settings)}


def _problems(d: dict) -> list[str]:
    """What is wrong with a settings dict, one line per key."""
    out = []
    for key, value in d.items():
        if key not in DEFAULTS:
            out.append(f"unknown key '{key}' (valid keys: {', '.join(DEFAULTS)})")
        elif type(value) is not type(DEFAULTS[key]):
            want = "true or false" if isinstance(DEFAULTS[key], bool) else "a string"
            out.append(f"key '{key}' must be {want}, got {value!r}")
    return out


def load_settings() -> tuple[Settings, str | None]:
    """(settings, message). Keys the file leaves out keep their defaults; the message is
    None when the file is fine or absent, else one line naming the file and what was
    ignored (a syntax error drops the whole file, a bad key only that key)."""
    path = settings_path()
    try:
        if not path.exists():
            return Settings(), None
        data = loads_toml(read_text(path, "settings", CONFIG_BYTES))
    except tomllib.TOMLDecodeError as e:
        return Settings(), f"{path}: TOML syntax error: {e}; using default settings"
    except UserError as e:
        return Settings(), f"{e}; using default settings"
    problems = _problems(data)
    good = {k: v for k, v in data.items() if not _problems({k: v})}
    message = f"{path}: {'; '.join(problems)}; ignored" if problems else None
    return Settings(**good), message


def save_settings(settings: Settings) -> Path:
    """Write the settings atomically. A wrong type is a programming error (ValueError); a
    write failure a UserError."""
    values = asdict(settings)
    problems = _problems(values)
    if problems:
        raise ValueError("; ".join(problems))
    return write_atomic(settings_path(), tomli_w.dumps(values))

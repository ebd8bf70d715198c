"""Persisted UI settings (theme, overlay, rejected tokens, stats panel, trace recording) in
`paths.settings_path()`.

Settings are a convenience: a broken or hand-edited file must never stop the app, so
loading falls back to defaults (per key where it can) and returns a message to show.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import tomli_w

from spectui.bounded import CONFIG_BYTES, loads_toml
from spectui.config.paths import settings_path, write_atomic
from spectui.config.text import read_text
from spectui.errors import UserError

DEFAULTS: dict = {
    "theme": "spectui-dark",  # a theme name; the app falls back to the default if it is gone
    "show_overlay": True,  # colour tokens by where they came from
    "show_rejected": True,  # show rejected draft tokens (struck through)
    "show_panel": True,  # the stats panel
    "record_traces": False,  # append every chat's turns to a trace in the data dir (spectui replay)
}


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


def load_settings() -> tuple[dict, str | None]:
    """(settings, message). The dict always has every key of DEFAULTS; the message is
    None when the file is fine or absent, else one line naming the file and what was
    ignored (a syntax error drops the whole file, a bad key only that key)."""
    path = settings_path()
    try:
        if not path.exists():
            return dict(DEFAULTS), None
        data = loads_toml(read_text(path, "settings", CONFIG_BYTES))
    except tomllib.TOMLDecodeError as e:
        return dict(DEFAULTS), f"{path}: TOML syntax error: {e}; using default settings"
    except UserError as e:
        return dict(DEFAULTS), f"{e}; using default settings"
    problems = _problems(data)
    good = {k: v for k, v in data.items() if not _problems({k: v})}
    message = f"{path}: {'; '.join(problems)}; ignored" if problems else None
    return DEFAULTS | good, message


def save_settings(settings: dict) -> Path:
    """Write the settings atomically (keys left out keep their defaults). An unknown key
    or wrong type is a programming error (ValueError); a write failure a UserError."""
    problems = _problems(settings)
    if problems:
        raise ValueError("; ".join(problems))
    return write_atomic(settings_path(), tomli_w.dumps(DEFAULTS | settings))

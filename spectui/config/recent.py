"""Recently used GGUF files (not embedded names), newest first, for the in-app model picker.

A convenience like the settings: a missing or damaged file is an empty list, and a write
failure is the caller's warning, never an error that stops the app.
"""

from __future__ import annotations

import json
from pathlib import Path

from spectui.bounded import CONFIG_BYTES, loads_json, read_bytes
from spectui.config.paths import data_dir, write_atomic
from spectui.errors import UserError

KEPT = 12


def recent_path() -> Path:
    return data_dir() / "recent_models.json"


def recent_models() -> list[str]:
    """The remembered files that still exist, newest first."""
    try:
        paths = loads_json(read_bytes(recent_path(), "recent models", CONFIG_BYTES))
    except (UserError, ValueError):
        return []
    if not isinstance(paths, list):
        return []
    return [p for p in paths if isinstance(p, str) and Path(p).is_file()]


def remember_models(*paths: str) -> None:
    """Put these files first (absolute paths); a UserError when the list cannot be written."""
    new = [str(Path(p).expanduser().resolve()) for p in paths]
    kept = new + [p for p in recent_models() if p not in new]
    write_atomic(recent_path(), json.dumps(kept[:KEPT], indent=1))

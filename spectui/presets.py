"""Presets: TOML files whose keys are the setup flags' names (`spec_draft_n_max = 5`).

Shipped presets live in the package (spectui.presets, from the top-level presets/);
user presets in the config dir override them by name. A bad preset names the file,
the line or key, and the fix, before anything starts.
"""

from __future__ import annotations

import argparse
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

import platformdirs
import tomli_w

from spectui.errors import UserError
from spectui.shipped import shipped_dir

NOT_PRESET_KEYS = {"preset", "verbose", "log_file", "help"}


def config_dir() -> Path:
    """The user config dir (SPECTUI_CONFIG_DIR overrides it, for tests and portable setups)."""
    return Path(os.environ.get("SPECTUI_CONFIG_DIR") or platformdirs.user_config_dir("spectui"))


def user_presets_dir() -> Path:
    return config_dir() / "presets"


def setup_keys() -> dict[str, argparse.Action]:
    """Valid preset keys and how to check them: the setup flags themselves."""
    from spectui.cli import add_setup_flags

    p = argparse.ArgumentParser(add_help=False)
    add_setup_flags(p)
    return {a.dest: a for a in p._actions if a.dest not in NOT_PRESET_KEYS}


@dataclass(frozen=True)
class Preset:
    name: str
    path: Path | None  # None for the built-in fallback
    description: str
    values: dict
    shipped: bool


def _shipped_files() -> dict[str, Path]:
    root = shipped_dir("presets")
    return {Path(f.name).stem: Path(str(f)) for f in root.iterdir() if f.name.endswith(".toml")}


def _user_files() -> dict[str, Path]:
    d = user_presets_dir()
    return {f.stem: f for f in sorted(d.glob("*.toml"))} if d.is_dir() else {}


def _check_value(path: Path, key: str, value, action: argparse.Action):
    want = action.type or (bool if isinstance(action, argparse._StoreTrueAction) else str)
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        raise UserError(
            f"{path}: key '{key}' must be {want.__name__}, got {type(value).__name__} {value!r}"
        )
    if action.choices and value not in action.choices:
        raise UserError(f"{path}: key '{key}' must be one of {', '.join(action.choices)}, got {value!r}")
    return value


def load_file(path: Path, name: str | None = None, shipped: bool = False) -> Preset:
    """Parse and check a preset; `shipped` ones are fixed by copying them to the user dir."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: TOML syntax error: {e}; fix the line or delete the file") from e
    except OSError as e:
        raise UserError(f"cannot read preset {path}: {e.strerror}") from e
    description = data.pop("description", "")
    keys = setup_keys()
    values = {}
    for key, value in data.items():
        if key not in keys:
            raise UserError(
                f"{path}: unknown key '{key}'; valid keys: description, {', '.join(sorted(keys))}"
            )
        values[key] = _check_value(path, key, value, keys[key])
    for key in ("model", "model_draft"):
        v = values.get(key)
        if v:
            from spectui.embedded import CATALOG

            if v not in CATALOG and not Path(v).expanduser().exists():
                where = (f"copy it to {user_presets_dir() / path.name} and put" if shipped else "put")
                raise UserError(
                    f"{path}: key '{key}': model file not found: {v}; {where} the path of your GGUF "
                    "file there (or an embedded name from `spectui models list`)"
                )
    return Preset(name or path.stem, path, description, values, shipped)


def available() -> dict[str, tuple[Path, bool]]:
    """name -> (file, shipped); user presets override shipped ones by name."""
    found = {n: (p, True) for n, p in _shipped_files().items()}
    found.update({n: (p, False) for n, p in _user_files().items()})
    return dict(sorted(found.items()))


def load(name_or_path: str) -> Preset:
    p = Path(name_or_path).expanduser()
    if name_or_path.endswith(".toml") and p.exists():
        return load_file(p)
    found = available()
    if name_or_path not in found:
        raise UserError(f"unknown preset '{name_or_path}'; available: {', '.join(found)}")
    path, shipped = found[name_or_path]
    return load_file(path, name_or_path, shipped)


def save_user(name: str, values: dict, description: str = "") -> Path:
    """Write a user preset atomically (temp file, then rename)."""
    if not name or any(c in name for c in "/\\") or name.startswith("."):
        raise UserError(f"invalid preset name {name!r}: use letters, digits, '-' and '_'")
    keys = setup_keys()
    clean = {k: v for k, v in values.items() if k in keys and v is not None}
    doc = ({"description": description} if description else {}) | clean
    d = user_presets_dir()
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{name}.toml"
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(doc), encoding="utf-8")
    os.replace(tmp, path)
    return path

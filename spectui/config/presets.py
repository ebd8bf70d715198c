"""Presets: TOML files whose keys are the setup flags' names (`spec_draft_n_max = 5`).

Shipped presets live in the package (spectui.shipped_presets, from the top-level presets/);
user presets in the config dir override them by name. A bad preset names the file,
the line or key, and the fix, before anything starts.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from spectui.bounded import CONFIG_BYTES, loads_toml
from spectui.config.embedded import CATALOG, install_command, user_path
from spectui.config.paths import shipped_dir, user_presets_dir, write_atomic
from spectui.config.setup import OPTIONS, check_value
from spectui.config.text import read_text
from spectui.errors import UserError


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


def load_file(path: Path, name: str | None = None, shipped: bool = False, check_models: bool = True) -> Preset:
    """Parse and check a preset; `shipped` ones are fixed by copying them to the user dir.
    `check_models`: also refuse model files that are not there."""
    try:
        data = loads_toml(read_text(path, "preset", CONFIG_BYTES))
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: TOML syntax error: {e}; fix the line or delete the file") from e
    description = data.pop("description", "")
    if not isinstance(description, str):  # every view prints it as text
        kind = type(description).__name__
        raise UserError(f"{path}: key 'description': {kind} {str(description)[:40]!r}; give a string in quotes")
    values = {}
    for key, value in data.items():
        if key not in OPTIONS:
            raise UserError(f"{path}: unknown key '{key}'; valid keys: description, {', '.join(sorted(OPTIONS))}")
        values[key] = check_value(key, value, str(path))
    preset = Preset(name or path.stem, path, description, values, shipped)
    if check_models:
        for key, v in missing_models(preset):
            where = f"copy it to {user_presets_dir() / path.name} and put" if shipped else "put"
            raise UserError(
                f"{path}: key '{key}': model file not found: {v}; {where} the path of your GGUF "
                "file there (or an embedded name from `spectui models list`)"
            )
    return preset


def missing_models(preset: Preset) -> list[tuple[str, str]]:
    """(key, value) of each model the preset names that is neither embedded nor a file here:
    a template's placeholders until the user fills in their paths."""
    try:
        return [
            (key, v)
            for key in ("model", "model_draft")
            if (v := preset.values.get(key)) and v not in CATALOG and not user_path(v).exists()
        ]
    except UserError as e:
        raise UserError(f"{preset.path}: {e}") from None


def available() -> dict[str, tuple[Path, bool]]:
    """name -> (file, shipped); user presets override shipped ones by name."""
    found = {n: (p, True) for n, p in _shipped_files().items()}
    found.update({n: (p, False) for n, p in _user_files().items()})
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class Listed:
    """A preset as a list of them shows it: its description, and what keeps it from loading."""

    name: str
    path: Path
    shipped: bool
    description: str
    problem: str  # "" when it loads; "needs model files" for a template, "needs pip install ..."; else why it cannot

    @property
    def about(self) -> str:
        return " · ".join(p for p in (self.problem, self.description or str(self.path)) if p)


def listed() -> list[Listed]:
    """Every available preset, read once, a file that cannot be read with its error."""
    out = []
    commands = {name: install_command(name) for name in CATALOG}  # what each embedded model misses
    for name, (path, shipped) in available().items():
        try:
            preset = load_file(path, name, shipped, check_models=False)
            missing = [commands[v] for key in ("model", "model_draft") if (v := preset.values.get(key)) in commands]
            needs = next((f"needs {command}" for command in missing if command), "")
            problem, description = "needs model files" if missing_models(preset) else needs, preset.description
        except UserError as e:
            problem, description = f"cannot be used: {e}", ""
        out.append(Listed(name, path, shipped, description, problem))
    return out


def shipped(name: str) -> Preset:
    """The preset spectui ships under `name`, whatever a user's own of that name says."""
    return load_file(_shipped_files()[name], name, shipped=True, check_models=False)


@functools.cache
def shipped_defaults() -> dict:
    """What the shipped default preset sets: the defaults a user meets without --preset (the
    help and the README's flags table say them)."""
    return shipped("default").values


def load(name_or_path: str) -> Preset:
    if name_or_path.endswith(".toml") and (p := user_path(name_or_path)).exists():
        return load_file(p)
    found = available()
    if name_or_path not in found:
        raise UserError(f"unknown preset '{name_or_path}'; available: {', '.join(found)}")
    path, shipped = found[name_or_path]
    return load_file(path, name_or_path, shipped)


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a user preset file (None where it can), asked as it is typed too."""
    if not name or any(c in name for c in "/\\") or name.startswith("."):
        return f"invalid preset name {name!r}: use letters, digits, '-' and '_'"
    return None


def save_user(name: str, values: dict, description: str = "") -> Path:
    """Write a user preset atomically (temp file, then rename)."""
    if why := name_problem(name):
        raise UserError(why)
    clean = {k: v for k, v in values.items() if k in OPTIONS and v is not None}
    doc = ({"description": description} if description else {}) | clean
    return write_atomic(user_presets_dir() / f"{name}.toml", tomli_w.dumps(doc))

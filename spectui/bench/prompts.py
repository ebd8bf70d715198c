"""Benchmark prompts: the shipped set (spectui/data/prompts.toml) or a user's TOML/JSONL file.

A prompt has an id, a language, a category (qa: questions and summaries; code: code and
repetitive text) and its text. A bad file is refused with the file, the line or entry
and the key at fault, before any model loads.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from spectui.bounded import loads_json, loads_toml
from spectui.config.text import read_text
from spectui.errors import UserError

CATEGORIES = ("qa", "code")
KEYS = ("id", "lang", "category", "text")


@dataclass(frozen=True)
class Prompt:
    id: str
    lang: str
    category: str
    text: str

    @property
    def group(self) -> str:
        """Results are reported per language and category: "ko/qa"."""
        return f"{self.lang}/{self.category}"

    def as_dict(self) -> dict:
        return asdict(self)


def _prompt(entry, where: str) -> Prompt:
    """One entry, checked key by key; `where` names the file and line or entry for errors."""
    if not isinstance(entry, dict):
        raise UserError(f"{where}: expected a table/object with keys {', '.join(KEYS)}")
    unknown = sorted(set(entry) - set(KEYS))
    if unknown:
        raise UserError(f"{where}: unknown key '{unknown[0]}' (keys are {', '.join(KEYS)})")
    for key in KEYS:
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise UserError(f"{where}: key '{key}' must be a non-empty string")
    if entry["category"] not in CATEGORIES:
        raise UserError(f"{where}: key 'category' is '{entry['category']}'; use one of {', '.join(CATEGORIES)}")
    return Prompt(**{k: entry[k].strip() if k != "text" else entry[k] for k in KEYS})


def _from_toml(data: str, name: str) -> list[Prompt]:
    try:
        doc = loads_toml(data)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{name}: not valid TOML: {e}") from e
    entries = doc.get("prompt")
    if not isinstance(entries, list) or set(doc) != {"prompt"}:
        raise UserError(f"{name}: expected only [[prompt]] tables, found keys: {', '.join(doc) or 'none'}")
    return [_prompt(e, f"{name}: [[prompt]] #{i + 1}") for i, e in enumerate(entries)]


def _from_jsonl(data: str, name: str) -> list[Prompt]:
    out = []
    for n, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = loads_json(line)
        except json.JSONDecodeError as e:
            raise UserError(f"{name}:{n}: not valid JSON: {e.msg} (column {e.colno})") from e
        out.append(_prompt(entry, f"{name}:{n}"))
    return out


def _checked(prompts: list[Prompt], name: str) -> list[Prompt]:
    if not prompts:
        raise UserError(f"{name}: no prompts")
    seen: set[str] = set()
    for p in prompts:
        if p.id in seen:
            raise UserError(f"{name}: prompt id '{p.id}' appears twice")
        seen.add(p.id)
    return prompts


def shipped() -> list[Prompt]:
    data = resources.files("spectui").joinpath("data/prompts.toml").read_text(encoding="utf-8")
    return _checked(_from_toml(data, "prompts.toml"), "prompts.toml")


def load(path: str | Path) -> list[Prompt]:
    """A .toml file of [[prompt]] tables, or JSONL: one {"id", "lang", "category", "text"} a line."""
    path = Path(path)
    data = read_text(path, "prompts file")
    if path.suffix == ".toml":
        prompts = _from_toml(data, str(path))
    elif path.suffix in (".jsonl", ".json"):
        prompts = _from_jsonl(data, str(path))
    else:
        raise UserError(f"{path}: prompts file must end in .toml or .jsonl")
    return _checked(prompts, str(path))


def select(prompts: list[Prompt], lang: str, category: str, limit: int | None) -> list[Prompt]:
    """Filter by language and category ("all" keeps every one); `limit` keeps the first N
    prompts of each language/category group, in file order."""
    chosen = [p for p in prompts if lang in ("all", p.lang) and category in ("all", p.category)]
    if not chosen:
        langs = ", ".join(sorted({p.lang for p in prompts}))
        raise UserError(f"no prompts with --lang {lang} and --category {category} (languages here: {langs})")
    if limit is None:
        return chosen
    if limit < 1:
        raise UserError(f"--limit must be at least 1, got {limit}")
    taken: dict[str, int] = {}
    out = []
    for p in chosen:
        if taken.get(p.group, 0) < limit:
            taken[p.group] = taken.get(p.group, 0) + 1
            out.append(p)
    return out

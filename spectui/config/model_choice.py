"""What the UI says about a model before it loads: its name as people write it, and whether
it can draft for a target."""

from __future__ import annotations

import functools
from pathlib import Path

from spectui.config.embedded import CATALOG, model_path, user_path
from spectui.errors import UserError
from spectui.llama import draft_fit
from spectui.llama.gguf import check_gguf_file


def model_label(value: str | None) -> str:
    """A setup's model as a short stable label for results: the catalog id, or the file name."""
    if not value:
        return "-"
    return value if value in CATALOG else Path(value).name


@functools.lru_cache(maxsize=16)
def model_name(value: str) -> str:
    """A model (catalog id or file) as people write it: an embedded model's title, else the
    file's stem (GGUF stems carry the quantisation; a header's general.name often does not,
    or names another model)."""
    if value in CATALOG:
        return CATALOG[value].title
    for name, model in CATALOG.items():
        try:
            if model_path(name) == Path(value):
                return model.title
        except UserError:  # an embedded model whose package is not installed
            continue
    return Path(value).stem


def recorded_name(model: dict | None) -> str | None:
    """A model a trace recorded, named as the chat names it: an embedded model (by its hash)
    by its title, a file by its stem; never the header's general.name."""
    if not model:
        return None
    sha = model.get("sha256")
    if isinstance(sha, str) and len(sha) >= 12:
        embedded = next((m.title for m in CATALOG.values() if m.sha256.startswith(sha)), None)
        if embedded:
            return embedded
    return Path(model["file"]).stem if isinstance(model.get("file"), str) else model.get("name")


def draft_misfit(target: str, draft: str) -> str | None:
    """Why `draft` cannot draft for `target`, said before anything loads: embedded models by
    their catalog vocabulary, files by their GGUF headers. None where they fit or cannot be
    told yet (a file missing or unreadable is refused when it loads)."""
    if target in CATALOG and draft in CATALOG:
        t, d = CATALOG[target].vocabulary, CATALOG[draft].vocabulary
        why = None if t == d else f"its vocabulary is {d}'s, not {t}'s"
    else:
        try:
            headers = [draft_fit.read_header(model_path(v) if v in CATALOG else user_path(v)) for v in (target, draft)]
        except (UserError, OSError):
            return None
        why = draft_fit.vocabulary_misfit(*headers)
    return f"cannot draft for {model_name(target)}: {why}" if why else None


def not_a_model(value: str) -> str | None:
    """Why a path typed into the model picker cannot be a model (None where it is a GGUF file),
    said as it is entered, not once a draft is picked and the load fails."""
    try:
        check_gguf_file(user_path(value))
    except UserError as e:
        return str(e)
    return None

"""Will a pair fit, said before it loads: llama.cpp's projection (spectui.plan.memory_projection) of a
pair the chat is about to load, and of each draft the picker offers for a target."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from spectui.config.embedded import CATALOG, is_installed, model_path, user_path
from spectui.config.setup import OPTIONS, Setup
from spectui.errors import UserError
from spectui.plan import memory_projection
from spectui.plan.memory_projection import MemoryProjection

# what a projection depends on besides the files (records marked memory): a pair loaded with the
# same ones fits as before
SETTINGS = tuple(o.name for o in OPTIONS.values() if o.memory)
Project = Callable[[Setup, Path, Path | None], tuple[MemoryProjection | None, str | None]]


def settings(setup: Setup) -> tuple:
    return tuple(getattr(setup, k) for k in SETTINGS)


def needs_check(setup: Setup, fitted: Setup | None) -> bool:
    """A local pair whose models or memory settings differ from those of `fitted`, a setup
    known to fit (the loaded one, or one checked before the app opened)."""
    if setup.server:
        return False  # the server holds the models
    return fitted is None or (setup.model, setup.model_draft, settings(setup)) != (
        fitted.model,
        fitted.model_draft,
        settings(fitted),
    )


def refusal(projection: MemoryProjection, one_line: bool = False) -> str:
    """Why the pair is not loaded, and each change that would make it fit; `one_line` names
    the files (a notice names the pair in its own words)."""
    if one_line:
        names = " + ".join(p.name for p in (projection.target, projection.draft) if p is not None)
        suggestions = "; ".join(projection.suggestions)
        return f"{names} at -c {projection.n_ctx}: {projection.verdict()}; what would fit: {suggestions}"
    head = f"At -c {projection.n_ctx}: {projection.verdict()}"
    return "\n".join([head, "What would fit:", *(f"  {s}" for s in projection.suggestions)])


def check(
    setup: Setup,
    target: Path,
    draft: Path | None,
    status: Callable[[str], object],
    project: Project = memory_projection.for_setup,
) -> None:
    """Refuse a pair that does not fit (a UserError: the shortfall and what would fit) before
    any weight is read; say on the loading line that one does. Where this platform cannot
    project, nothing is said: the load goes on as it would have."""
    status("checking memory")
    projection, _ = project(setup, target, draft)
    if projection is None:
        return
    if not projection.fits:
        raise UserError(refusal(projection))
    status(f"memory {projection.verdict()}")


def _local(value: str) -> Path | None:
    """A model's file where it is here already (an embedded model not yet assembled is not)."""
    if value in CATALOG:
        return model_path(value) if is_installed(value) else None
    path = user_path(value)
    return path if path.is_file() else None


class PickerFit:
    """What the picker says of each pair, memoised per files and memory settings, so the
    picker opens at once the second time."""

    def __init__(self, project: Project = memory_projection.for_setup):
        self.project = project
        self._said: dict[tuple, str | None] = {}

    def _key(self, setup: Setup, target: str, draft: str | None) -> tuple | None:
        try:
            paths = (_local(target), _local(draft) if draft else None)
        except UserError:
            return None
        if paths[0] is None or (draft and paths[1] is None):
            return None
        return (*paths, settings(setup))

    def known(self, setup: Setup, target: str, drafts: list[str | None]) -> bool:
        """Every pair is said already (or cannot be said without a load)."""
        return all(k is None or k in self._said for k in (self._key(setup, target, d) for d in drafts))

    def said(self, setup: Setup, target: str, draft: str | None) -> str | None:
        """ "fits: …" or "✗ does not fit: …" (blocking: call from a worker); None where the
        pair cannot be projected before it loads (a model not assembled yet, this platform)."""
        key = self._key(setup, target, draft)
        if key is None:
            return None
        if key not in self._said:
            try:
                projection, _ = self.project(setup, key[0], key[1])
            except UserError:  # a file llama.cpp cannot read: the load says why
                projection = None
            if projection is None:
                self._said[key] = None
            else:
                self._said[key] = projection.verdict() if projection.fits else f"✗ {projection.verdict()}"
        return self._said[key]

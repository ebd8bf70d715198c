"""From a preset and overrides to a Setup: the one path chat, run, bench and the TUI's preset
switch share; and a setup put on other models, or restored from a saved chat.

Precedence: an override (a flag given on the command line) > the preset > the defaults.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from spectui import spec_types
from spectui.config import presets
from spectui.config.assembly import Report
from spectui.config.embedded import CATALOG, resolve_model, user_path
from spectui.config.model_choice import model_label
from spectui.config.setup import OPTIONS, Setup, check_value
from spectui.engine.server import server_url
from spectui.errors import UserError
from spectui.llama import devices, draft_fit
from spectui.llama.gguf import check_gguf_file
from spectui.spec_config import available_types, parse_types, types_label
from spectui.spec_types import Spec


def resolve(preset: str | None, overrides: dict) -> Setup:
    """The preset (default: "default") with `overrides` (option name -> value) on top.

    A target given without a draft drops the preset's draft, which belongs to the preset's
    target; a draft-simple preset then speculates with ngram-mod instead (and says so).
    """
    chosen = presets.load(preset or "default")
    unknown = set(overrides) - set(OPTIONS)
    if unknown:
        raise ValueError(f"not setup options: {', '.join(sorted(unknown))}")
    values = dict(chosen.values)
    if not (overrides.get("server") or values.get("server")):  # a file's fault comes before any note about it
        for v in (overrides.get("model"), overrides.get("model_draft")):
            if v and v not in CATALOG:
                check_gguf_file(user_path(v))
    notes = []
    if "model" in overrides and "model_draft" not in overrides and values.get("model_draft"):
        values["model_draft"] = None
        if "spec_type" not in overrides and spec_types.DRAFT_SIMPLE in _given_types(values):
            values["spec_type"] = spec_types.SPEC_DEFAULT
            notes.append(f"no draft model given (-md): speculating with {spec_types.SPEC_DEFAULT}")
    values |= overrides
    draft = overrides.get("model_draft")
    if (
        draft
        and "spec_type" not in overrides
        and spec_types.DRAFT_SIMPLE in _given_types(values)
        and user_path(draft).is_file()
    ):
        # as llama.cpp does without --spec-type: a hidden-state draft says what it drafts with
        kind = draft_fit.read_header(user_path(draft)).draft_type
        if kind != spec_types.DRAFT_SIMPLE:
            values["spec_type"] = tuple(kind if t == spec_types.DRAFT_SIMPLE else t for t in _given_types(values))
            notes.append(f"{Path(draft).name} is a {kind} draft: speculating with {kind}")
    if values.get("server"):
        notes += [
            f"--server: the server's models and speculation are used; {flag} ignored"
            for key, flag in (("model", "-m"), ("model_draft", "-md"), ("spec_type", "--spec-type"))
            if key in overrides
        ]
    elif not values.get("model"):
        raise UserError(f"preset '{chosen.name}' names no target model; pass -m FILE")
    elif values.get("n_gpu_layers", -1) != 0 and (idle := devices.idle_backends()):
        notes.append(f"llama.cpp's {', '.join(idle)} backend found no device: every layer runs on the CPU")
    for url in (values.get("server") or "").split(","):
        if url.strip():
            server_url(url.strip())  # a malformed URL fails here, before anything connects
    setup = Setup().with_values(values, preset=chosen.name, notes=tuple(notes))  # checks every value
    if "model_draft" in overrides and not setup.spec.uses_draft_model:
        setup = replace(
            setup,
            model_draft=None,
            notes=setup.notes
            + (f"the draft model (-md) is unused with --spec-type {setup.spec.label}: not loading it",),
        )
    return setup


def _given_types(values: dict) -> tuple[Spec, ...]:
    """The types a preset and the flags give; none from text that is not types, which
    with_values refuses in its turn."""
    try:
        return parse_types(values.get("spec_type") or spec_types.BASELINE)
    except UserError:
        return ()


def with_models(setup: Setup, target: str, draft: str | None, report: Report | None = None) -> Setup:
    """`setup` on another target and draft (the in-app model picker): the other settings are
    kept, and so is the speculation where the new pair allows it; a type the pair cannot run
    gives way to the one it can (the draft file's type, else ngram-mod), and the note says so.
    Resolving assembles an embedded model on first use (progress on `report`)."""
    target_header = draft_fit.read_header(resolve_model(target, report))
    draft_header = draft_fit.read_header(resolve_model(draft, report)) if draft else None
    allowed = available_types(draft_header.draft_type if draft_header else None, target_header.has_nextn)
    types = setup.spec.types
    kept = [t for t in types if t in allowed]
    notes: tuple[str, ...] = ()
    if not kept:
        kept = [draft_header.draft_type if draft_header else spec_types.SPEC_DEFAULT]
        notes = (f"{types_label(types)} needs another draft: speculating with {kept[0]}",)
    return replace(setup, model=target, model_draft=draft, spec=setup.spec.with_types(kept), notes=notes)


def restored(saved: dict, current: Setup) -> tuple[Setup, str | None]:
    """The setup a saved chat ran with (its `setup` values over `current`), and None; or,
    when its model files are gone or its values are no longer valid, `current` and why."""
    if not saved:
        return current, None
    if not isinstance(saved, dict):
        return current, "this chat's settings are not usable (not a table of settings); keeping the current ones"
    try:
        values = {
            k: check_value(k, v, "the chat file") if v is not None else None for k, v in saved.items() if k in OPTIONS
        }
    except UserError as e:
        return current, f"this chat's settings are not usable ({e}); keeping the current ones"
    gone = [
        v
        for key in ("model", "model_draft")
        if (v := values.get(key)) and v not in CATALOG and not Path(v).expanduser().is_file()
    ]
    if gone:
        return current, f"this chat ran on {', '.join(gone)}, which is gone; keeping {model_label(current.model)}"
    try:
        setup = current.with_values(values, notes=())
    except UserError as e:
        return current, f"this chat's settings are not usable ({e}); keeping the current ones"
    return setup, None
